/**
 * v3 JSON-RPC front of the simulator. Request and response shapes follow the Go node
 * (pkg/api/v3/jsonrpc): errors carry code = -33000 - status and data = {message, code}.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { core } from 'accumulate.js';
import { normUrl } from '../ledger/urls.js';
import { JSONRPC_PROTOCOL_BASE, STATUS } from '../ledger/errors.js';
import { SimError, type SimLedger, type TxRecord } from './ledger.js';
import { MerkleChain } from './merkle.js';

const MAX_BODY = 4 * 1024 * 1024;

class RpcFail extends Error {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

function protocolError(e: SimError): RpcFail {
  return new RpcFail(JSONRPC_PROTOCOL_BASE - STATUS[e.code], e.message, { message: e.message, code: e.code, codeID: STATUS[e.code] });
}

function range<T>(records: T[], start = 0, total = records.length) {
  return records.length ? { recordType: 'range', records, start, total } : { recordType: 'range', start, total };
}

export class SimRpc {
  constructor(readonly ledger: SimLedger) {}

  handle(method: string, params: any): unknown {
    switch (method) {
      case 'query':
        return this.query(params ?? {});
      case 'submit':
        return this.ledger.submit(params?.envelope).map(fmtSubmission);
      case 'validate':
        return this.ledger.submit(params?.envelope, { checkOnly: true }).map(fmtSubmission);
      case 'faucet':
        return fmtSubmission(this.ledger.faucet(params?.account));
      case 'network-status':
        return this.networkStatus();
      case 'node-info':
        return { peerID: 'ledger-sim', network: 'LedgerSim', services: [], version: 'ledger-sim (simulated; receipts are not network-anchored)', commit: '' };
      case 'consensus-status':
        return { ok: true, lastBlock: { height: this.ledger.state.block, time: new Date(this.ledger.state.blockTime).toISOString() }, version: 'ledger-sim' };
      default:
        throw new RpcFail(-32601, 'Method not found', method);
    }
  }

  networkStatus() {
    const g = this.ledger.globals;
    return {
      oracle: { price: g.oraclePrice },
      globals: {
        operatorAcceptThreshold: { numerator: 2, denominator: 3 },
        validatorAcceptThreshold: { numerator: 2, denominator: 3 },
        majorBlockSchedule: '0 */12 * * *',
        feeSchedule: { createIdentitySliding: g.createIdentitySliding, createSubIdentity: g.createSubIdentity },
        limits: { dataEntryParts: 100, accountAuthorities: 20, bookPages: 20, pageEntries: 100, identityAccounts: 100 },
      },
      executorVersion: 'v2-vandenberg',
      directoryHeight: this.ledger.state.block,
      majorBlockHeight: 0,
      simulated: true,
    };
  }

  private lastBlockTime() {
    return new Date(this.ledger.state.blockTime).toISOString().replace(/\.\d+Z$/, 'Z');
  }

  private url(s: unknown, field: string): string {
    try {
      return normUrl(String(s ?? ''), field);
    } catch (e) {
      throw new SimError('badRequest', (e as Error).message);
    }
  }

  query(p: { scope?: unknown; query?: any }) {
    const L = this.ledger;
    if (typeof p.scope !== 'string' || !p.scope) throw new SimError('badRequest', 'query: missing scope');
    const q = p.query ?? { queryType: 'default' };
    const txid = L.parseTxId(p.scope);
    if (txid) {
      const rec = L.txByHash(txid.hash);
      if (!rec) {
        const sig = L.sigByHash(txid.hash);
        if (!sig) throw new SimError('notFound', `message ${txid.hash} not found`);
        const out: Record<string, unknown> = {
          recordType: 'message',
          id: sig.id,
          message: { type: 'signature', signature: sig.signature, txID: sig.txID },
          status: sig.status,
          statusNo: STATUS[sig.status],
        };
        if (sig.error) out.error = { ...sig.error, codeID: STATUS[sig.status] };
        out.received = sig.received;
        return { ...out, lastBlockTime: this.lastBlockTime() };
      }
      return { ...this.messageRecord(rec), lastBlockTime: this.lastBlockTime() };
    }
    const scope = this.url(p.scope, 'scope');
    switch (q.queryType ?? 'default') {
      case 'default': {
        const account = L.accountJson(scope);
        const pending = L.pendingOf(scope).map((r) => ({ recordType: 'txID', value: r.txid }));
        return { recordType: 'account', account, pending: range(pending), lastBlockTime: this.lastBlockTime() };
      }
      case 'pending': {
        if (!q.range)
          throw new RpcFail(-33501, 'query is invalid: field Range is not set', { message: 'query is invalid: field Range is not set', code: 'unknownError' });
        L.accountJson(scope); // notFound for unknown accounts
        const all = L.pendingOf(scope);
        const start = Number(q.range.start ?? 0);
        const count = Number(q.range.count ?? all.length);
        const slice = all.slice(start, start + count);
        const records = q.range.expand ? slice.map((r) => this.messageRecord(r)) : slice.map((r) => ({ recordType: 'txID', value: r.txid }));
        return { ...range(records, start, all.length), lastBlockTime: this.lastBlockTime() };
      }
      case 'chain': {
        L.accountJson(scope);
        const leaves = L.chainLeaves(scope);
        if (!q.name) return range([{ recordType: 'chain', name: 'main', type: 'transaction', count: leaves.length }]);
        if (q.name !== 'main') throw new SimError('notFound', `chain ${q.name} of ${scope} not simulated`);
        let index: number;
        if (q.entry !== undefined) {
          index = MerkleChain.of(leaves).indexOf(String(q.entry));
          if (index < 0) throw new SimError('notFound', `entry ${q.entry} not found on ${scope}#chain/main`);
        } else if (q.index !== undefined) {
          index = Number(q.index);
          if (!(index >= 0 && index < leaves.length)) throw new SimError('notFound', `index ${q.index} out of range on ${scope}#chain/main`);
        } else if (q.range) {
          const start = Number(q.range.start ?? 0);
          const count = Number(q.range.count ?? leaves.length);
          const recs = leaves.slice(start, start + count).map((h, i) => this.chainEntry(scope, start + i, h, false));
          return range(recs, start, leaves.length);
        } else {
          return { recordType: 'chain', name: 'main', type: 'transaction', count: leaves.length };
        }
        return this.chainEntry(scope, index, leaves[index]!, !!q.includeReceipt);
      }
      case 'data': {
        const acc = L.accountJson(scope);
        if (acc.type !== 'dataAccount') throw new SimError('badRequest', `${scope} is not a data account`);
        const entries = L.state.data[scope] ?? [];
        const entryRecord = (i: number) => {
          const e = entries[i]!;
          const rec = L.txByHash(e.txHash)!;
          return {
            recordType: 'chainEntry',
            account: scope,
            name: 'data',
            type: 'transaction',
            index: i,
            entry: e.entryHash,
            value: this.messageRecord(rec, false),
          };
        };
        if (q.range) {
          const start = Number(q.range.start ?? 0);
          const count = Number(q.range.count ?? entries.length);
          const idx = entries.map((_, i) => i).slice(start, start + count);
          return range(idx.map(entryRecord), start, entries.length);
        }
        if (q.entry !== undefined) {
          const i = entries.findIndex((e) => e.entryHash === String(q.entry).toLowerCase());
          if (i < 0) throw new SimError('notFound', `data entry ${q.entry} not found on ${scope}`);
          return entryRecord(i);
        }
        if (q.index !== undefined) {
          const i = Number(q.index);
          if (!(i >= 0 && i < entries.length)) throw new SimError('notFound', `data entry index ${q.index} not found on ${scope}`);
          return entryRecord(i);
        }
        if (entries.length === 0) throw new SimError('notFound', `${scope} has no data entries`);
        return entryRecord(entries.length - 1);
      }
      default:
        throw new SimError('badRequest', `query type ${String(q.queryType)} is not supported by the simulator`);
    }
  }

  private chainEntry(scope: string, index: number, hash: string, withReceipt: boolean) {
    const rec = this.ledger.txByHash(hash);
    const out: Record<string, unknown> = { recordType: 'chainEntry', account: scope, name: 'main', type: 'transaction', index, entry: hash };
    if (rec) out.value = this.messageRecord(rec, false);
    if (withReceipt) {
      out.receipt = this.ledger.receipt(scope, hash).receipt;
      out.simulated = 'receipt proves entry -> account chain -> simulator root chain; not anchored to a real network';
    }
    return out;
  }

  messageRecord(rec: TxRecord, withSigs = true) {
    const L = this.ledger;
    const out: Record<string, unknown> = {
      recordType: 'message',
      id: rec.txid,
      message: { type: 'transaction', transaction: new core.Transaction(rec.transaction).asObject() },
    };
    // like the Go node, a transaction that was never initiated has no status yet
    if (rec.initiated || rec.synthetic || rec.status !== 'pending') {
      out.status = rec.status;
      out.statusNo = STATUS[rec.status];
    }
    if (rec.error) out.error = { ...rec.error, codeID: STATUS[rec.error.code as keyof typeof STATUS] };
    if (rec.result) out.result = rec.result;
    out.received = rec.received;
    out.produced = range(rec.produced.map((v) => ({ recordType: 'txID', value: v })));
    if (withSigs) {
      const bySigner = new Map<string, unknown[]>();
      const principalSigs: unknown[] = [];
      for (const [authority, v] of Object.entries(rec.authorityVotes)) {
        principalSigs.push({
          recordType: 'message',
          message: {
            type: 'signature',
            signature: { type: 'authority', origin: v.origin, authority, vote: v.vote === 'accept' ? undefined : v.vote, txID: rec.txid },
            txID: rec.txid,
          },
        });
      }
      if (rec.initiated && rec.payer) principalSigs.unshift({ recordType: 'message', message: { type: 'creditPayment', payer: rec.payer, initiator: true } });
      for (const s of rec.signatures) {
        const list = bySigner.get(s.signer) ?? [];
        list.push({ recordType: 'message', id: s.id, message: { type: 'signature', signature: s.signature, txID: rec.txid } });
        bySigner.set(s.signer, list);
      }
      const sets: unknown[] = [];
      if (principalSigs.length) sets.push({ recordType: 'signatureSet', account: { type: 'unknown', url: rec.principal }, signatures: range(principalSigs) });
      for (const [signer, list] of bySigner) {
        let account: unknown = { type: 'unknown', url: signer };
        try {
          account = L.accountJson(signer);
        } catch {
          /* signer deleted */
        }
        sets.push({ recordType: 'signatureSet', account, signatures: range(list) });
      }
      out.signatures = range(sets);
    }
    return out;
  }
}

/** Submission shape of the Go node: ok -> code ok/200 + success; failure -> delivered+failed, no `success`. */
function fmtSubmission(s: ReturnType<SimLedger['faucet']>) {
  const status: Record<string, unknown> = { txID: s.status.txID, code: s.status.code };
  if (s.status.code === 'delivered' || !s.success) status.delivered = true;
  if (!s.success) status.failed = true;
  status.codeNum = STATUS[s.status.code];
  if (s.status.error) status.error = { ...s.status.error, codeID: STATUS[s.status.code] };
  const out: Record<string, unknown> = { status };
  if (s.success) out.success = true;
  if (s.message) out.message = s.message;
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new RpcFail(-32600, `request body larger than ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function callOne(rpc: SimRpc, msg: any) {
  const id = msg && typeof msg === 'object' && 'id' in msg ? msg.id : null;
  try {
    if (!msg || typeof msg !== 'object' || typeof msg.method !== 'string') throw new RpcFail(-32600, 'Invalid Request');
    return { jsonrpc: '2.0', result: rpc.handle(msg.method, msg.params), id };
  } catch (e) {
    let f: RpcFail;
    if (e instanceof RpcFail) f = e;
    else if (e instanceof SimError) f = protocolError(e);
    else f = new RpcFail(JSONRPC_PROTOCOL_BASE - 500, `internal error: ${(e as Error).message}`, { message: (e as Error).message, code: 'internalError' });
    return { jsonrpc: '2.0', error: { code: f.rpcCode, message: f.message, data: f.data }, id };
  }
}

export function createRpcServer(rpc: SimRpc, onRequest?: () => void): Server {
  return createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && (path === '/status' || path === '/')) {
        return send(200, { ok: true, simulated: true, block: rpc.ledger.state.block });
      }
      if (req.method !== 'POST' || (path !== '/v3' && path !== '/v3/')) {
        return send(404, { error: 'not found: POST JSON-RPC to /v3' });
      }
      const text = await readBody(req);
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        return send(200, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      }
      onRequest?.();
      if (Array.isArray(msg))
        return send(
          200,
          msg.map((m) => callOne(rpc, m)),
        );
      return send(200, callOne(rpc, msg));
    } catch (e) {
      if (!res.headersSent) send(200, { jsonrpc: '2.0', error: { code: e instanceof RpcFail ? e.rpcCode : -32603, message: (e as Error).message }, id: null });
    }
  });
}
