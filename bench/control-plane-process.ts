// Runs lbtree's control plane in its own process for the xDS client benchmark, serving `clusters` EDS
// clusters and their ClusterLoadAssignments (`endpoints` each), so that the clients measured have the
// benchmark process to themselves. Prints the address as one JSON line; exits when stdin closes.
import { ControlPlane, cluster, clusterLoadAssignment } from '../src/control-plane/index.js';

const clusters = Number(process.argv[2] ?? 1000);
const endpoints = Number(process.argv[3] ?? 10);
const resources = [];
for (let c = 0; c < clusters; c++) {
  resources.push(cluster({ name: `cluster-${c}`, edsServiceName: `eds-${c}` }));
  resources.push(
    clusterLoadAssignment(`eds-${c}`, [
      {
        zone: `zone-${c % 3}`,
        endpoints: Array.from(
          { length: endpoints },
          (_, e) => `10.${(c >> 8) & 255}.${c & 255}.${e + 1}:8080`,
        ),
      },
    ]),
  );
}
const controlPlane = new ControlPlane({ resources });
await controlPlane.listen('127.0.0.1:0');
process.stdout.write(`${JSON.stringify({ address: controlPlane.address })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  controlPlane.close();
  process.exit(0);
});
