/**
 * Tensors to and from safetensors files, readable by Hugging Face's `safetensors` library.
 *
 *   serialization.save(model.stateDict(), "model.safetensors");
 *   model.loadStateDict(serialization.load("model.safetensors"));
 */
export { save, load, loadFile, serialize, deserialize, type TensorDict, type LoadedFile, type LoadOptions } from "./io.js";
export { SafetensorsError, parseHeader, buildHeader, HEADER_LIMIT_BYTES } from "./safetensors.js";
