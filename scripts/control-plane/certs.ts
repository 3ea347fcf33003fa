import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ClusterCerts {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** The real node's kubelet (system:node:<name>, group system:nodes: the Node authorizer's subject). */
  nodeCert: string;
  nodeKey: string;
  /** kube-proxy (system:kube-proxy, bound to system:node-proxier by the API server's default RBAC). */
  proxyCert: string;
  proxyKey: string;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** Where the certificates of a control plane in `dir` live. */
export function certPaths(dir: string): ClusterCerts {
  const p = (name: string) => join(dir, name);
  return {
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    serverCert: p('apiserver.crt'),
    serverKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    serviceAccountKey: p('sa.key'),
    serviceAccountPub: p('sa.pub'),
    nodeCert: p('node.crt'),
    nodeKey: p('node.key'),
    proxyCert: p('kube-proxy.crt'),
    proxyKey: p('kube-proxy.key'),
  };
}

/**
 * A throwaway CA, API server serving cert, client certs (cluster-admin, the real node's kubelet,
 * kube-proxy) and service-account key pair.
 */
export function createCerts(dir: string, nodeName: string): ClusterCerts {
  const certs = certPaths(dir);
  const days = '3650';
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    certs.caKey,
    '-out',
    certs.caCert,
    '-days',
    days,
    '-subj',
    '/CN=static-export-test-ca',
  ]);
  const sign = (key: string, cert: string, subj: string, ext?: string) => {
    const csr = `${cert}.csr`;
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', subj]);
    const args = [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      certs.caCert,
      '-CAkey',
      certs.caKey,
      '-CAcreateserial',
      '-out',
      cert,
      '-days',
      days,
    ];
    if (ext) {
      writeFileSync(`${cert}.ext`, ext);
      args.push('-extfile', `${cert}.ext`);
    }
    openssl(args);
  };
  sign(
    certs.serverKey,
    certs.serverCert,
    '/CN=kube-apiserver',
    'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\n' +
      'extendedKeyUsage=serverAuth\n',
  );
  sign(
    certs.adminKey,
    certs.adminCert,
    '/O=system:masters/CN=static-export-admin',
    'extendedKeyUsage=clientAuth\n',
  );
  sign(
    certs.nodeKey,
    certs.nodeCert,
    `/O=system:nodes/CN=system:node:${nodeName}`,
    'extendedKeyUsage=clientAuth\n',
  );
  sign(certs.proxyKey, certs.proxyCert, '/CN=system:kube-proxy', 'extendedKeyUsage=clientAuth\n');
  openssl(['genrsa', '-out', certs.serviceAccountKey, '2048']);
  openssl(['rsa', '-in', certs.serviceAccountKey, '-pubout', '-out', certs.serviceAccountPub]);
  return certs;
}
