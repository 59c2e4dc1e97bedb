// node --import tsx --conditions=source tools/text/save_trained.ts OUTDIR
// Writes the tokenizers of test/text/trained.ts as OUTDIR/<name>.json for check_trained.py.
import { trainedTokenizers } from "../../test/text/trained.js";

const out = process.argv[2];
for (const [name, tok] of Object.entries(trainedTokenizers())) tok.save(`${out}/${name}.json`);
