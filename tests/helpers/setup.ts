/**
 * Loaded before every test file: the tokenizer's tables load on first need in production
 * (operations await them); unit tests call the counting functions directly, so they load here.
 */
import { loadTokenizer } from "../../core/budget/tokens.ts";

await loadTokenizer();
