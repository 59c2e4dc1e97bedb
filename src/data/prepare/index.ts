/** Datasets built from what Debian and npm packages put on the machine (nothing downloads). */
export { parseMo, readMo, type MoCatalog, type MoEntry } from "./mo.js";
export { gettextPairs, type TranslationPair } from "./gettext_pairs.js";
export { wordnetDefinitions } from "./wordnet.js";
export { spamAssassin, spamAssassinDir, emailText, type LabelledEmail } from "./spam_assassin.js";
