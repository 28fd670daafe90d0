/**
 * Sealing secrets at rest (docs/security.md "Project environment"): AES-256-GCM from node:crypto
 * under one 32-byte key kept in a file apart from the database (`--secrets-key-file`, default
 * `<dataDir>/secrets.key`, created with mode 0600 on first use). A copy of the database (a backup,
 * a dump, a stolen PostgreSQL volume) then holds no secret in plaintext; whoever holds the key file
 * and the database holds the secrets, which is why the key file is never inside the database and a
 * PostgreSQL deployment gives every node the same file.
 *
 * Sealed form: `v1:<iv>:<tag>:<ciphertext>`, each part base64url; the project id and the variable's
 * name are the additional data, so a sealed value copied to another row does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

const KEY_BYTES = 32;
const IV_BYTES = 12;

/** Thrown when the key file is unreadable or malformed, or a sealed value does not open with it. */
class SecretKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretKeyError';
  }
}

/** Seals and opens secrets with the key of one file (see the file comment). */
export class SecretBox {
  private key: Promise<Buffer> | null = null;

  /** @param keyFile the key file: 32 random bytes as 64 hexadecimal digits (a trailing newline allowed) */
  constructor(private readonly keyFile: string) {}

  /**
   * The sealed form of `value` for the variable `name` of project `projectId`; creates the key file
   * when it does not exist yet. @throws SecretKeyError when the key file is malformed
   */
  async seal(projectId: string, name: string, value: string): Promise<string> {
    const key = await this.keyOf(true);
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(`${projectId}\n${name}`));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join(':');
  }

  /**
   * The value sealed by `seal` with the same project id and name.
   * @throws SecretKeyError when there is no key file, or the value was sealed with another key (or altered)
   */
  async open(projectId: string, name: string, sealed: string): Promise<string> {
    const key = await this.keyOf(false);
    const [version, iv, tag, body] = sealed.split(':');
    if (version !== 'v1' || !iv || !tag || body === undefined)
      throw new SecretKeyError(`The secret ${name} is not in a sealed form this server reads.`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(`${projectId}\n${name}`));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(
        `The secret ${name} does not open with this server's secrets key: it was set with another --secrets-key-file. Set it again, or give this node the same key file.`,
      );
    }
  }

  private keyOf(create: boolean): Promise<Buffer> {
    this.key ??= this.readKey(create);
    // A failed read is tried again next time (the operator may fix the file meanwhile).
    this.key.catch(() => (this.key = null));
    return this.key;
  }

  private async readKey(create: boolean): Promise<Buffer> {
    let text = await readFile(this.keyFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw new SecretKeyError(`The secrets key file cannot be read (${error.code ?? 'error'}).`);
    });
    if (text === null) {
      if (!create) throw new SecretKeyError('No secrets key file: no secret was ever set with this key file.');
      await mkdir(dirname(this.keyFile), { recursive: true, mode: 0o700 });
      // `wx`: a racing process's file wins, and is read back below.
      await writeFile(this.keyFile, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' }).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        },
      );
      text = await readFile(this.keyFile, 'utf8');
    }
    const hex = text.trim();
    if (!/^[0-9a-f]{64}$/i.test(hex))
      throw new SecretKeyError('The secrets key file must hold 64 hexadecimal digits (32 random bytes).');
    return Buffer.from(hex, 'hex');
  }
}
