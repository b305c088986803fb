/** Runs the port contracts against every storage implementation available here. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { KvKeyStore } from "../../adapters/storage/kv-key-store.ts";
import { MemoryCounters } from "../../adapters/storage/memory-counters.ts";
import { buildPorts } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { parseConfig } from "../../core/config.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { countersContract } from "./counters-contract.ts";
import { keyStoreContract } from "./key-store-contract.ts";

const sqlite = async () => {
  const dir = mkdtempSync(join(tmpdir(), "quarry-contract-"));
  return (await buildPorts({ ...parseConfig({}), dataDir: dir }, nodeRuntime, new MemoryLogger())).ports;
};

keyStoreContract("memory (unstorage memory driver)", async () => new KvKeyStore(createStorage({ driver: memoryDriver() })));
keyStoreContract("SQLite (unstorage db0 driver)", async () => (await sqlite()).keys);
countersContract("memory", async () => new MemoryCounters());
countersContract("SQLite", async () => (await sqlite()).counters);
