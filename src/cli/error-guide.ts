import type { ErrorCode, RabbitError } from '../core/errors.js';
import { SYMLINK } from '../core/private-files.js';
import { damagedArchiveNext } from './damaged-archive.js';
import { shellQuote, shellWords } from './format.js';

/**
 * What to do next, for each failure a newcomer can meet. The error's own message says what
 * happened and what was tried (the URL, never the key); this table adds the next step, in one
 * place, so every command gives the same advice for the same failure.
 */
export type NextStep = (error: RabbitError) => string | undefined;

const BASE_URL_HINT =
  '--base-url (or RABBIT_BASE_URL) is the address in front of /rabbit/api/, e.g. https://pidoco.com';

const PROXY_VARIABLES = 'HTTPS_PROXY (HTTP_PROXY for an http:// --base-url)';

const dataOf = (error: RabbitError, key: string): string | undefined => {
  const value = error.data?.[key];
  return typeof value === 'string' ? value : undefined;
};

export const ERROR_GUIDE: Readonly<Partial<Record<ErrorCode, NextStep>>> = {
  CONNECTION_REFUSED: () =>
    `nothing listens at that host and port: check the port in --base-url (or RABBIT_BASE_URL), and that the service is up`,
  // The message names the proxy by host:port; its URL may hold a password, so no step repeats it.
  PROXY_REFUSED: () =>
    `nothing listens at the proxy's host and port: check ${PROXY_VARIABLES} and that the proxy is up; ` +
    `if this service is reached without a proxy, add its host to NO_PROXY`,
  // Written without a scheme in front of user:pass@: output redacts any URL's credentials, examples too.
  PROXY_AUTH: () =>
    "put the proxy's user name and password in its URL, percent-encoded, as user:pass@host:port after the " +
    'http:// of HTTPS_PROXY (HTTP_PROXY for an http:// --base-url; an @ in the password is written %40). ' +
    'They go to the proxy only and are never printed',
  PROXY_FAILED: () =>
    `check the proxy's host and port in ${PROXY_VARIABLES}, that this machine reaches it, and that it lets this ` +
    `machine open a tunnel to the service's host and port; if this service is reached without a proxy, add its host ` +
    `to NO_PROXY`,
  HOST_NOT_FOUND: () =>
    'check the spelling of the host in --base-url (or RABBIT_BASE_URL), and that this machine can resolve it (DNS, VPN)',
  TLS_CERTIFICATE: () =>
    'if the service uses a private or self-signed certificate authority, set NODE_EXTRA_CA_CERTS to the path ' +
    'of its certificate (PEM) and run again; certificate checks are never switched off',
  WRONG_SCHEME: (error) => {
    const suggestion = dataOf(error, 'suggestion');
    if (dataOf(error, 'target') === 'proxy' || suggestion === undefined) {
      const variable = dataOf(error, 'variable') ?? 'HTTPS_PROXY';
      return (
        `that proxy takes plain HTTP: write ${variable} with http:// in front of its host and port instead of ` +
        'https:// (the tunnel through it still carries TLS to the service, end to end)'
      );
    }
    if (dataOf(error, 'insecure') === 'yes') {
      return (
        `that port speaks plain HTTP: use the service's https:// address if it has one; else --base-url ` +
        `${suggestion} --allow-insecure-http, and the API key crosses the network in clear text`
      );
    }
    return `write the base URL with the scheme that port speaks: --base-url ${suggestion}`;
  },
  NO_ANSWER: () =>
    'the host took the connection but sent nothing back: check that --base-url names the Rabbit service ' +
    '(the API lives under {base}/rabbit/api/) and, if one is set, that HTTPS_PROXY answers; ' +
    'if the service is only slow today, try again later',
  HOST_UNREACHABLE: () =>
    "check --base-url (or RABBIT_BASE_URL), this machine's network, and HTTPS_PROXY if you need a proxy",
  API_NOT_FOUND: () => BASE_URL_HINT,
  BAD_BASE_URL: (error) => {
    const suggestion = dataOf(error, 'suggestion');
    return suggestion !== undefined ? `write it with its scheme: --base-url ${suggestion}` : BASE_URL_HINT;
  },
  API_KEY_FLAG: () =>
    'put the key in the environment (export RABBIT_API_KEY=your-key) or in a file, one key per line, and pass ' +
    '--api-key-file PATH. There is no --api-key flag because command lines show up in `ps` and shell history',
  KEY_FILE: () => 'check the path; the file holds one key per line (# starts a comment); or set RABBIT_API_KEY instead',
  NO_API_KEY: () => 'set RABBIT_API_KEY (several keys: comma-separated) or pass --api-key-file PATH (one key per line)',
  KEY_REFUSED: (error) =>
    dataOf(error, 'access') === 'read-only'
      ? 'use a read-write key (RABBIT_API_KEY or --api-key-file): the account settings of the service show which keys may write'
      : 'the key is wrong, revoked or not allowed to do this: copy it again from the account settings of the service',
  NO_SUCH_PROTOTYPE: (error) => {
    // Past the few the message names, `ls` lists an archive's; an account's list has no such command.
    const archive = dataOf(error, 'archive');
    const listed =
      archive !== undefined && Number(error.data?.['unnamed']) > 0
        ? ` (rabbit-export ls ${shellQuote(archive)} lists them all)`
        : '';
    const all = error.data?.['required'] === true ? '' : ', or without --prototype for all of them';
    return `run again with --prototype naming one of the ids it holds${listed}${all}`;
  },
  // Held by a run that is alive: the same command meets the same lock until that run ends, so the
  // step is to wait for it. A lock no one can be shown to hold says in its message what to remove,
  // unless it lies beside a path the user chose (`flag`): a file there that is no lock record may be
  // one of theirs, and the way on is another path or that file moved aside, never its removal.
  LOCKED: (error) => {
    const holder = error.data?.['holder'] as { pid?: unknown; host?: unknown } | undefined;
    const flag = dataOf(error, 'flag');
    if (typeof holder?.pid !== 'number') {
      if (flag === undefined) return undefined;
      const path = dataOf(error, 'lockFile') ?? 'it';
      return `name another file with ${flag}, or move that file out of the way (${shellWords('mv', path, `${path}.aside`)}) if it is not needed there`;
    }
    const where = typeof holder.host === 'string' && holder.host !== '' ? ` on ${holder.host}` : '';
    return `wait until process ${holder.pid}${where} has ended (it holds the lock), then run the command again`;
  },
  // A usage error that knows the way out carries it (restore: where a right id is found).
  USAGE: (error) => dataOf(error, 'next'),
  // Another file where restore's journal goes: the archive itself, or a file the journal would be
  // appended to. --force would not help: that file is never the journal. Nor is moving it a step: the
  // user may have named it (--journal /etc/passwd), and another name always does.
  NOT_A_JOURNAL: (error) =>
    dataOf(error, 'archive') !== undefined
      ? 'name a new file with --journal, or leave --journal out (the journal then goes beside the archive)'
      : 'name a new file with --journal; the file there was left as it is',
  PORT_IN_USE: () => 'choose another port, or --port 0 for any free one',
  OUTPUT_EXISTS: () => 'pass --force to replace it, or choose another name',
  // The archive's work folder is made beside it: a folder that takes no new files (/proc, a read-only
  // mount, one of another user) refuses both.
  OUTPUT_UNWRITABLE: (error) =>
    dataOf(error, 'journal') !== undefined
      ? 'move that file out of the way, or name with --journal a new file in a folder this user can create files in'
      : 'choose an --out in a folder this user can create files in, on a disk with room for the archive',
  OUTPUT_PARENT_MISSING: (error) => {
    const parent = dataOf(error, 'parent');
    return parent !== undefined
      ? `create the folder first (${shellWords('mkdir', '-p', parent)}), or choose a path in a folder that exists`
      : 'create the folder first, or choose a path in a folder that exists';
  },
  OUTPUT_KIND: (error) => {
    if (dataOf(error, 'expected') === 'folder')
      return dataOf(error, 'parentOf') !== undefined
        ? `choose a path in a folder that exists, not under the file ${dataOf(error, 'path') ?? ''}`
        : 'give the path of a folder (it is created if its parent exists)';
    // A symlink or a FIFO at the path: "a file" is what the user thinks it is, and --force will not do either.
    const found = dataOf(error, 'found');
    return found !== undefined
      ? `choose another path: --force replaces a regular file only, never ${found}`
      : 'give the path of a file, not of a folder';
  },
  // A path the user named (`flag`: --journal, --out, --dir) is never advised away with `rm -r`:
  // it may be their home or their thesis. Only what the tool makes itself (a work folder, a lock)
  // is theirs to remove when it is theirs at all.
  UNSAFE_PATH: (error) => {
    const path = dataOf(error, 'path') ?? 'it';
    if (dataOf(error, 'mend') === 'chmod')
      return `it is yours but others can write to it: ${shellWords('chmod', dataOf(error, 'mode') ?? '700', path)}, then run again`;
    // Quoted: `rm -r` of a path with a space in it would remove two other paths.
    const aside = `if you did not make it, move it aside (${shellWords('mv', path, `${path}.suspect`)}) and tell whoever shares this machine`;
    const flag = dataOf(error, 'flag');
    // A link the user named is not advised away: it may be the system's own (--journal /dev/stdout),
    // and moving that breaks every program that writes to it.
    if (flag !== undefined && dataOf(error, 'why') === SYMLINK)
      return `nothing is followed through a symbolic link: give ${flag} the path it leads to, or another path`;
    if (flag !== undefined) return `give ${flag} another path, one of your own; ${aside}`;
    return `${aside}; if it is yours, remove it (${shellWords('rm', '-r', path)}) and run again`;
  },
  // An archive a reader cannot read as it was written (damaged, cut short, not rabbit-export's, or of
  // a newer format): the words are damaged-archive.ts's, which verify's FAILED shares.
  ARCHIVE_CORRUPT: (error) => damagedArchiveNext(error),
  NOT_A_ZIP: (error) => damagedArchiveNext(error),
};

/** The next step for an error, if the table has one. */
export function nextStepFor(error: RabbitError): string | undefined {
  return ERROR_GUIDE[error.code]?.(error);
}
