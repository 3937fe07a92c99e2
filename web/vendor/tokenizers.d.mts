// Hugging Face's tokenizer library (@huggingface/tokenizers), which scripts/build/vendor.js copies
// here: the part of it web/lib/tokenizer.js calls. Written by hand; tsc does not read the
// vendored module.
export interface Encoding {
  ids: number[];
  tokens: string[];
  attention_mask: number[];
}
export interface AddedToken {
  content: string;
  id: number;
  special: boolean;
}
export interface Decoder {
  decode(tokens: string[]): string;
}
export declare class Tokenizer {
  constructor(tokenizer: object, config: object);
  decoder: Decoder | null;
  model: { vocab: string[] } | null;
  encode(text: string, options?: { add_special_tokens?: boolean }): Encoding;
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  token_to_id(token: string): number | undefined;
  id_to_token(id: number): string | undefined;
  get_added_tokens_decoder(): Map<number, AddedToken>;
}
