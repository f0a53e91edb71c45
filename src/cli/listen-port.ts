import { RabbitError } from '../core/errors.js';

/** Starts a server on `port`; a port another program holds becomes PORT_IN_USE, with the port named. */
export async function listenOn<T>(port: number, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'EADDRINUSE') {
      throw new RabbitError('PORT_IN_USE', `port ${port} on 127.0.0.1 is already in use by another program`, {
        cause: error,
        data: { port },
      });
    }
    if (code === 'EACCES') {
      throw new RabbitError('PORT_IN_USE', `port ${port} needs privileges this user does not have`, {
        cause: error,
        data: { port },
      });
    }
    throw error;
  }
}
