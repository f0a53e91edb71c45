/**
 * Runs of bytes looked for in a stream that comes in pieces (core/base64-keys.ts), where a body
 * that arrives a few bytes at a time must cost a few steps a piece, not a search of everything
 * held back at the end of each.
 */

/**
 * The runs as one automaton (Aho-Corasick, with each state's next state worked out for every byte):
 * a state is the longest end of what has been read that begins some run. Read byte by byte, it
 * finds every run that ends in a piece and knows how much of the end may still begin one, without
 * reading the bytes held back from the piece before again.
 */
export class RunAutomaton<Run extends { readonly bytes: Buffer; readonly width: number }> {
  /** Each byte's column in `next`: 0 for a byte no run is spelt with, which leads back to the start. */
  readonly column = new Uint8Array(256);
  /** log2 of a row's length. */
  private readonly shift: number;
  /**
   * A state is named by its row in `next`, where the rows after it are: the state after the one at
   * `row` reads a byte is next[row + column[byte]] (a state's number would cost a multiplication a
   * byte, on the path every byte waits for).
   */
  readonly next: Int32Array;
  /** 1 at the row of a state where runs end. */
  readonly found: Uint8Array;
  /** The runs that end where a state is reached, longest first; undefined for most states. */
  private readonly ends: (readonly Run[] | undefined)[];
  /**
   * How many bytes at the end of what has been read, in a state, are held back: what may still
   * begin a run, with the `width` bytes before it (the character a replacer rewrites with a run);
   * or one of `befores` (such a character, where a run may begin with the next byte).
   */
  private readonly hold: Uint32Array;

  constructor(runs: readonly Run[], befores: readonly Buffer[]) {
    let used = 1;
    for (const bytes of [...runs.map((run) => run.bytes), ...befores])
      for (const b of bytes) if (this.column[b] === 0) this.column[b] = used++;
    // Rows a power of two long: a state's number is its row shifted, not divided.
    this.shift = Math.ceil(Math.log2(used));
    const columns = 1 << this.shift;
    // The trie of the runs and of those characters: each state's children and depth, the runs it
    // spells, the widest run below it, and how many bytes it holds back as a character before.
    const children: Map<number, number>[] = [new Map()];
    const depth = [0];
    const own: Run[][] = [[]];
    const widest = [0];
    const before = [0];
    const add = (bytes: Buffer, width: number): number => {
      let state = 0;
      for (const b of bytes) {
        const column = this.column[b] as number;
        let child = (children[state] as Map<number, number>).get(column);
        if (child === undefined) {
          child = children.length;
          (children[state] as Map<number, number>).set(column, child);
          children.push(new Map());
          depth.push((depth[state] as number) + 1);
          own.push([]);
          widest.push(0);
          before.push(0);
        }
        widest[state] = Math.max(widest[state] as number, width);
        state = child;
      }
      return state;
    };
    for (const run of runs) (own[add(run.bytes, run.width)] as Run[]).push(run);
    for (const bytes of befores) before[add(bytes, 0)] = bytes.length;
    const states = children.length;
    this.next = new Int32Array(states * columns);
    this.ends = new Array<readonly Run[] | undefined>(states);
    this.hold = new Uint32Array(states);
    const fallback = new Uint32Array(states);
    // Breadth first: a state's fallback (the longest proper end of what it spells that is a state)
    // is shallower, so its moves are known when the state's are worked out.
    const queue = [0];
    for (let q = 0; q < queue.length; q++) {
      const state = queue[q] as number;
      const back = fallback[state] as number;
      for (let c = 1; c < used; c++) {
        const child = (children[state] as Map<number, number>).get(c);
        const onward = state === 0 ? 0 : (this.next[back * columns + c] as number);
        if (child === undefined) {
          this.next[state * columns + c] = onward;
          continue;
        }
        this.next[state * columns + c] = child;
        fallback[child] = onward;
        queue.push(child);
      }
      const ends = [...(own[state] as Run[]), ...(state === 0 ? [] : (this.ends[back] ?? []))];
      if (ends.length > 0) this.ends[state] = ends.sort((a, b) => b.bytes.length - a.bytes.length);
      // At the start nothing is held. In a state that goes on to a run, what it spells and the
      // character before it; and what a shorter end of it, that is a state too, holds.
      if (state !== 0)
        this.hold[state] = Math.max(
          (widest[state] as number) > 0 ? (depth[state] as number) + (widest[state] as number) : 0,
          before[state] as number,
          this.hold[back] as number,
        );
    }
    this.found = new Uint8Array(this.next.length);
    for (let state = 0; state < states; state++) if (this.ends[state] !== undefined) this.found[state * columns] = 1;
    for (let i = 0; i < this.next.length; i++) this.next[i] = (this.next[i] as number) * columns;
  }

  /** The runs that end at the state at `row`. */
  endsAt(row: number): readonly Run[] {
    return this.ends[row >>> this.shift] ?? [];
  }

  /** How many bytes are held back in the state at `row`. */
  holdAt(row: number): number {
    return this.hold[row >>> this.shift] as number;
  }

  /** The state after the last bytes of `buf`, from the start: a run is never longer than `longest`. */
  stateAfter(buf: Buffer, longest: number): number {
    let row = 0;
    for (let i = Math.max(0, buf.length - longest); i < buf.length; i++)
      row = this.next[row + (this.column[buf[i] as number] as number)] as number;
    return row;
  }
}
