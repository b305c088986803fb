/**
 * Loaded before every test file: HTML parsing and the tokenizer load on first need in
 * production (operations await them); unit tests call those functions directly, so they load here.
 */
import { loadLibraries } from "../../core/lazy.ts";

await loadLibraries();
