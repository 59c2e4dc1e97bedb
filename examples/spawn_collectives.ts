// node --import tsx --conditions=source examples/spawn_collectives.ts [nprocs=3]
//
// Launching ranks from code instead of a launcher (torch.multiprocessing.spawn): spawn() re-runs
// this script in `nprocs` processes with ringrun's environment set, and each calls
// main(rank, ...args). Code before the spawn() call runs in every process, so it holds only
// definitions; the code after it runs in the parent once every rank is done.
import { dist, spawn, tensor } from "ringtorch";

async function main(rank: number, worldSize: number): Promise<void> {
  await dist.initProcessGroup();
  const t = tensor([rank + 1, 10 * (rank + 1)]);
  dist.allReduce(t);
  const expected = (worldSize * (worldSize + 1)) / 2;
  if ((t.toArray() as number[])[0] !== expected) throw new Error(`rank ${rank}: allReduce gave ${t.toArray()}, expected ${expected}`);
  const gathered = Array.from({ length: worldSize }, () => tensor([0]));
  dist.allGather(gathered, tensor([rank]));
  console.log(`rank ${rank}/${worldSize}: allReduce -> [${t.toArray()}], allGather -> [${gathered.map((g) => (g.toArray() as number[])[0])}]`);
  await dist.destroyProcessGroup();
}

const nprocs = Number(process.argv[2] ?? 3);
await spawn(main, { nprocs, args: [nprocs] });
console.log(`all ${nprocs} processes finished`);
