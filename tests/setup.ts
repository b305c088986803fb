/** Runs in every test file before its tests (vitest setupFiles): undo what the file made, even when it failed. */
import { afterAll } from "vitest";
import { cleanUp } from "./helpers/temp.ts";

afterAll(cleanUp);
