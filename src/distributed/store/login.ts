import { CLIENT_PROOF, Command, FrameReader, FrameWriter, SERVER_PROOF } from "./protocol.js";
import { NONCE_BYTES, newNonce, proofMatches, tokenProof } from "./proof.js";

/**
 * Both halves of the store login (protocol.ts): the server proves it holds the job token first,
 * then the client; neither ever sends the token.
 */

/**
 * Raised when the process listening at the store's address did not prove that it holds the job
 * token. The client has then sent it nothing but a random nonce, and retrying cannot help.
 */
export class StoreAuthError extends Error {
  constructor(address: string, why: string) {
    super(
      `the process listening at ${address} did not prove that it holds this job's token (${why}), so nothing was sent ` +
        "to it. Someone else may hold the port (any program, possibly another user's: pick another port " +
        "(MASTER_PORT or the rendezvous endpoint's) and see who listens with `ss -ltnp`), or it is the store of " +
        "another job: every rank must run with the RINGTORCH_STORE_TOKEN of the process that hosts the store.",
    );
    this.name = "StoreAuthError";
  }
}

/** The server accepted the connection but did not answer the login in time (the caller may retry). */
export class SilentServerError extends Error {}

/** Sends one login frame and resolves with the answer's body (rejects on any other status). */
export type LoginRequest = (frame: FrameWriter) => Promise<FrameReader>;

/** The client's half; `send` must fail with StoreAuthError on a malformed or non-Ok answer. */
export async function clientLogin(token: string, address: string, send: LoginRequest): Promise<void> {
  const nonceC = newNonce();
  const r = await send(new FrameWriter().u8(Command.Hello).u32(0).bytes(nonceC));
  let nonceS: Uint8Array;
  let proofS: Uint8Array;
  try {
    nonceS = r.bytes();
    proofS = r.bytes();
  } catch {
    throw new StoreAuthError(address, "its answer to the login was malformed");
  }
  if (!proofMatches(proofS, tokenProof(token, SERVER_PROOF, nonceC, nonceS))) throw new StoreAuthError(address, "its proof was wrong");
  await send(new FrameWriter().u8(Command.Prove).u32(0).bytes(tokenProof(token, CLIENT_PROOF, nonceC, nonceS)));
}

/**
 * The server's half, for one connection. `step` takes each frame until the login is done: it
 * returns the answer's body to send, or throws with the reason to log (the caller then drops
 * the connection without an answer).
 */
export class ServerLogin {
  private nonces: Buffer[] = [];
  done = false;

  constructor(private readonly token: string) {}

  step(r: FrameReader, command: number): (w: FrameWriter) => void {
    if (this.nonces.length === 0) {
      if (command !== Command.Hello) throw new Error("it did not start with the store login (no ringtorch client, or an older one)");
      const nonceC = Buffer.from(r.bytes());
      if (nonceC.length !== NONCE_BYTES) throw new Error(`its nonce has ${nonceC.length} bytes, not ${NONCE_BYTES}`);
      const nonceS = newNonce();
      this.nonces = [nonceC, nonceS];
      const proof = tokenProof(this.token, SERVER_PROOF, nonceC, nonceS);
      return (w) => w.bytes(nonceS).bytes(proof);
    }
    if (command !== Command.Prove) throw new Error("it sent no token proof");
    if (!proofMatches(r.bytes(), tokenProof(this.token, CLIENT_PROOF, this.nonces[0]!, this.nonces[1]!))) {
      throw new Error("it does not hold the job token (wrong proof)");
    }
    this.done = true;
    return () => {};
  }
}
