// What the real node's start says when another node's bridge is still there: the cluster dir a
// process or mount of it still names (so `cluster:down` there removes everything), else the exact
// commands for what it left on the host. Outputs of ps, mountinfo, ip and nft as they look.
import { describe, expect, it } from 'vitest';
import { nodeDirIn, removalCommands } from '../../../scripts/control-plane/node.ts';

describe('nodeDirIn', () => {
  it('finds the cluster dir in a node process left running', () => {
    const ps = [
      'node scripts/cluster.ts up',
      '/root/.cache/static-export-operator/bin/kubelet --config=/home/me/node/app/.cluster/node/kubelet.yaml --v=1',
    ];
    expect(nodeDirIn(ps, ['/'])).toBe('/home/me/node/app/.cluster');
    expect(
      nodeDirIn(['containerd --config /tmp/static-export-demo-x/cluster/node/containerd.toml'], []),
    ).toBe('/tmp/static-export-demo-x/cluster');
  });

  it('finds it in a mount its pods left once every process is gone', () => {
    const mounts = [
      '/',
      '/proc',
      '/work/.cluster/node/containerd-state/io.containerd.grpc.v1.cri/sandboxes/abc/shm',
    ];
    expect(nodeDirIn(['bash'], mounts)).toBe('/work/.cluster');
  });

  it('finds none when nothing names a node directory', () => {
    expect(nodeDirIn(['containerd', 'node /srv/node/server.js'], ['/', '/srv/node/data'])).toBeUndefined();
  });
});

describe('removalCommands', () => {
  it('names the veths on the bridge, the bridge and kube-proxy tables, nothing else', () => {
    const veths =
      '7: veth1a2b3c4d@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue master se-node0 state UP\n';
    const tables = 'table ip filter\ntable ip kube-proxy\ntable ip6 kube-proxy\ntable inet firewalld\n';
    expect(removalCommands(veths, tables)).toEqual([
      'ip link del veth1a2b3c4d',
      'ip link del se-node0',
      'nft delete table ip kube-proxy',
      'nft delete table ip6 kube-proxy',
    ]);
    expect(removalCommands('', '')).toEqual(['ip link del se-node0']);
  });
});
