import type { Algorithm, RequestKind } from "./messages.js";

/**
 * Which algorithm runs a collective. Small messages want few rounds (halving-doubling, trees);
 * large ones want every byte to cross each link once (rings and pipelined chains). Every rank
 * computes the same answer from the same sizes, so no agreement is needed.
 *
 * Forcing an algorithm (RINGTORCH_ALGO or the `algorithm` option) is for tests and tuning; a
 * collective without that algorithm uses its nearest one: broadcast has tree and ring (a
 * pipelined chain), reduce has tree and ring; allGather's halving-doubling needs a power-of-two
 * group (else ring); scatter, gather, allToAll and barrier have a single direct algorithm.
 */
export const SMALL_BYTES = 64 * 1024;
const SMALL_BROADCAST_BYTES = 256 * 1024;

export function chooseAlgorithm(kind: RequestKind, bytes: number, forced: Algorithm | null): Algorithm {
  if (forced) {
    if ((kind === "broadcast" || kind === "reduce") && forced === "rhd") return "tree";
    return forced;
  }
  switch (kind) {
    case "broadcast":
      return bytes <= SMALL_BROADCAST_BYTES ? "tree" : "ring";
    case "reduce":
      return bytes <= SMALL_BYTES ? "tree" : "ring";
    default:
      return bytes <= SMALL_BYTES ? "rhd" : "ring";
  }
}

export function parseAlgorithm(value: string | undefined, where: string): Algorithm | null {
  if (value === undefined || value === "" || value === "auto") return null;
  if (value === "ring" || value === "rhd" || value === "tree") return value;
  throw new Error(`${where}: unknown algorithm ${JSON.stringify(value)}; expected auto, ring, rhd or tree`);
}
