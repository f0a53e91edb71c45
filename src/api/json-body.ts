/**
 * A JSON body's text, without the UTF-8 byte-order mark some servers (and Windows tools behind
 * them) put in front: JSON.parse and lossless-json both refuse it, and RFC 8259 lets a parser
 * ignore it. Only the text is trimmed: the body is archived as sent, mark and all, so every reader
 * of an archived body takes its text from here too. Free of imports: the archive's readers load it.
 */
export function jsonText(body: Buffer): string {
  const start = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  return body.toString('utf8', start);
}
