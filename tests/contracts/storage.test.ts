/** Runs the port contracts against every storage implementation available here. */
import { createStorage } from "unstorage";
import memoryDriver from "unstorage/drivers/memory";
import { KvKeyStore } from "../../adapters/storage/kv-key-store.ts";
import { MemoryCounters } from "../../adapters/storage/memory-counters.ts";
import { buildPorts } from "../../adapters/shared/bootstrap.ts";
import { nodeRuntime } from "../../adapters/node/server.ts";
import { parseConfig } from "../../core/config.ts";
import { MemoryLogger } from "../helpers/app.ts";
import { onCleanup, tempDir } from "../helpers/temp.ts";
import { countersContract } from "./counters-contract.ts";
import { keyStoreContract } from "./key-store-contract.ts";

const sqlite = async () => {
  const built = await buildPorts({ ...parseConfig({}), dataDir: tempDir("quarry-contract-") }, nodeRuntime, new MemoryLogger());
  onCleanup(() => built.close()); // runs before its folder is removed
  return built.ports;
};

keyStoreContract("memory (unstorage memory driver)", async () => new KvKeyStore(createStorage({ driver: memoryDriver() })));
keyStoreContract("SQLite (unstorage db0 driver)", async () => (await sqlite()).keys);
countersContract("memory", async () => new MemoryCounters());
countersContract("SQLite", async () => (await sqlite()).counters);
