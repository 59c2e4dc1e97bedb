/** torch.linalg: the functions ringtorch has of it, under their PyTorch names in camelCase. */
export { vectorNorm } from "./vector_norm.js";
