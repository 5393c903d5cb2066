/**
 * The Lua scripts Redis runs for Tome (the dashboard's in account-scripts.ts), each atomically (Redis runs one script at a time), so
 * that replicas sharing one Redis count exactly. What is kept, under the prefix `tome:`:
 *
 *   tome:keys              hash  key id → the key's record (JSON, as in keys.json)
 *   tome:accounts          hash  account → {plan, rate?} (JSON, as in keys.json)
 *   tome:auth              hash  sha256 of a key → "ENDS SCOPE ACCOUNT ID" (ENDS: ms when it stops working; 0 once revoked)
 *   tome:keys:version      int   bumped by every change of the three above (the key tool's compare-and-set), to Redis's time in µs at least
 *   tome:last_used         hash  key id → ms of its last request
 *   tome:rate:ID:SECOND    int   requests of key ID admitted in that Unix second (D19); expires after 2 s
 *   tome:spent:YYYY-MM     hash  account → credits spent that UTC month (D20)
 *   tome:held:YYYY-MM      hash  account → credits held by requests in flight
 *   tome:holds:YYYY-MM:ACCOUNT  zset  each hold in flight ("REPLICA:SEQ:COST"), scored by when it lapses
 *   tome:use:YYYY-MM-DD    hash  "ID:r" → requests made with key ID that UTC day, "ID:c" → credits it spent (the dashboard's); expires after USE_DAYS_MS
 *   tome:account_keys:NAME set   the ids of account NAME's keys (the dashboard reads one account's keys: D81)
 *   tome:account_names     zset  every account's name, all scored 0 (read in name order, a page at a time)
 *   tome:indexed           int   1 once the two above were built from a store written before them
 *   tome:void:HOLD         string  a hold whose admission (UNADMIT) or 2xx's settlement (UNSETTLE) the replica gave up on and undid: an admission still to come
 *                                  holds nothing, a settlement spends nothing; expires after HOLD_LEASE_MS
 *   tome:lapsed:HOLD       string  a hold that lapsed and was given back by an admission (its settlement, if it spends after, deletes it), for UNSETTLE;
 *                                  expires after LAPSED_KEPT_MS
 *   tome:settings          string  the settings the replica started last runs with (JSON), for the next to compare its own (D39)
 *   tome:probe             string  written by a replica's probe while Redis is unreachable (a Redis that answers PING may refuse writes); expires after 10 s
 *   tome:session:SHA       string  a dashboard session (JSON), by the sha256 of its cookie; expires with it
 *   tome:account_sessions:NAME  zset  the hashes of account NAME's sessions ("@operator": the operator's), scored by their end
 *   tome:signin:NAME:WINDOW  int  failed dashboard sign-ins of a client address, or for the operator's token, in that window
 *   tome:signin:known:NAME  string  an address the operator signed in from (D83); expires after KNOWN_ADDRESS_MS
 *
 * A hold lapses HOLD_LEASE_MS (a PDF) or REQUEST_HOLD_LEASE_MS after it was taken: a replica killed with requests in flight
 * never settles them, and their credits come back to the account then (the requests were
 * never answered, so they cost nothing). The plans' limits are written into the admission
 * script from plans.ts, so a replica and its script always agree.
 */
import { PLAN_NAMES, PLANS } from "../plans";
import { ACCOUNT_SCRIPTS } from "./account-scripts";
import { script } from "./connection";
import { SOCKET_IDLE_SECONDS, WORKER_STUCK_MS } from "../../request-time";

/** Longer than a PDF can take (its queue and render are bounded by PDF_SOCKET_SECONDS, 180 s). */
export const HOLD_LEASE_MS = 5 * 60_000;
/**
 * Longer than any other request can take (D181), so that one answered in time is not found lapsed: its body is whole
 * within the socket's idle timeout, closed up to Bun's check later (less than another idle timeout), and then its work
 * waits in a search worker at most until the worker is taken for stuck; it is settled before its answer is sent.
 * (The socket's idle timeout closes one sooner, but a hold lasting longer costs only a killed replica's credits coming
 * back later.)
 */
export const REQUEST_HOLD_LEASE_MS = 2 * SOCKET_IDLE_SECONDS * 1000 + WORKER_STUCK_MS;

/**
 * How long the marker of a hold that lapsed (tome:lapsed:HOLD) is kept: a settlement given up on and undone within this of
 * its hold's lapse is told from one whose hold lapsed (D194); past it, it is taken for lapsed, and stays charged if it ran.
 */
const LAPSED_KEPT_MS = 86_400_000;

/** How long a day's per-key counts are kept: this month's and the last are shown. */
const USE_DAYS_MS = 70 * 86_400_000;

/** ENDS in tome:auth for a key that never expires (within a double's exact integers, as Lua reads it). */
export const NEVER_ENDS = Number.MAX_SAFE_INTEGER;

const planTable = PLAN_NAMES.map((name) => {
  const { rate, quota } = PLANS[name];
  return `${name} = {${rate}, ${Number.isFinite(quota) ? quota : -1}}`;
}).join(", ");

/**
 * Admission, one round trip per request. ARGV: sha256 of the key, now (ms), cost, needs full
 * (1/0), month (YYYY-MM), hold id, lease (ms), the store's version the replica last saw this
 * key at, and the UTC day (YYYY-MM-DD) whose count of the key's requests this one joins. Replies {0, 1 if the store has a
 * version else 0} for an unknown key (a store that had one and lost it was flushed: D156); else {status, version, record, account, …}, where
 * record and account are the key's JSON, or "" when the version is the one the replica gave
 * (it holds them already: every change of the store bumps the version). Status 1: revoked or
 * expired; 3: admitted to the rate check, followed by rate remaining (-1: over the limit), spent, held, hold (0 none, 1
 * held, an unlimited quota's too, which refuses nothing: the hold tells UNSETTLE whether its settlement ran, D194); 2: the scope lacks full, followed by the same, counting nothing and holding
 * nothing (the rate's remaining at least 0), for the refusal's headers (D23). Spent and held are the month's, this
 * request's hold included. {4}: the replica gave this admission up and undid it before Redis ran it (UNADMIT's
 * tome:void:HOLD): it counts and holds nothing, and nobody reads the reply (D194). Reading that marker is one EXISTS
 * of every admission, an O(1) lookup beside the dozen calls the script makes; no round trip more.
 */
export const ADMIT = script(
  "admit",
  `local PLANS = {${planTable}}
local sha, now, cost, needsFull, month, holdId, lease = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7])
if redis.call('EXISTS', 'tome:void:' .. holdId) == 1 then return {4} end
local auth = redis.call('HGET', 'tome:auth', sha)
if not auth then return {0, redis.call('EXISTS', 'tome:keys:version')} end
local ends, scope, account, id = string.match(auth, '^(%S+) (%S+) (%S+) (%S+)$')
local accountJson = redis.call('HGET', 'tome:accounts', account)
if not accountJson then return {0, redis.call('EXISTS', 'tome:keys:version')} end
local version = redis.call('GET', 'tome:keys:version') or '0'
local record, sentAccount = '', ''
if version ~= ARGV[8] then
  record = redis.call('HGET', 'tome:keys', id)
  if not record then return {0} end
  sentAccount = accountJson
end
if now >= tonumber(ends) then return {1, version, record, sentAccount} end
local counted = needsFull ~= '1' or scope == 'full'
if counted then
  redis.call('HSET', 'tome:last_used', id, ARGV[2])
  local useKey = 'tome:use:' .. ARGV[9]
  if redis.call('HINCRBY', useKey, id .. ':r', 1) == 1 then redis.call('PEXPIRE', useKey, ${USE_DAYS_MS}) end
end
local acct = cjson.decode(accountJson)
local plan = PLANS[acct.plan]
if not plan then return redis.error_reply('account ' .. account .. ' has an unknown plan') end
local rate, quota = plan[1], plan[2]
if acct.plan == 'enterprise' and type(acct.rate) == 'number' then rate = acct.rate end
local window = 'tome:rate:' .. id .. ':' .. string.format('%d', math.floor(now / 1000))
local count = tonumber(redis.call('GET', window) or '0')
local rateRemaining = -1
if not counted then
  rateRemaining = math.max(0, rate - count)
elseif count < rate then
  count = redis.call('INCR', window)
  if count == 1 then redis.call('PEXPIRE', window, 2000) end
  rateRemaining = rate - count
end
local spentKey, heldKey, holdsKey = 'tome:spent:' .. month, 'tome:held:' .. month, 'tome:holds:' .. month .. ':' .. account
local lapsed = redis.call('ZRANGEBYSCORE', holdsKey, '-inf', ARGV[2], 'LIMIT', 0, 100)
if #lapsed > 0 then
  local back = 0
  for _, member in ipairs(lapsed) do
    local holdId, cost = string.match(member, '^(.*):(%d+)$')
    back = back + tonumber(cost)
    redis.call('SET', 'tome:lapsed:' .. holdId, '1', 'PX', ${LAPSED_KEPT_MS})
  end
  redis.call('ZREM', holdsKey, unpack(lapsed))
  redis.call('HINCRBY', heldKey, account, -back)
end
local spent = tonumber(redis.call('HGET', spentKey, account) or '0')
local held = tonumber(redis.call('HGET', heldKey, account) or '0')
local hold = 0
if counted and rateRemaining >= 0 and (quota < 0 or quota - spent - held >= cost) then
  redis.call('ZADD', holdsKey, string.format('%d', now + lease), holdId .. ':' .. cost)
  held = redis.call('HINCRBY', heldKey, account, cost)
  hold = 1
end
return {counted and 3 or 2, version, record, sentAccount, rateRemaining, spent, held, hold}`,
);

/**
 * Settlement, when the answer's status is known. ARGV: month, account, hold id, cost, spend (1: a 2xx; 0: give it back), quota (-1:
 * unlimited), the UTC day and the key id its credits are counted to (tome:use). A hold that lapsed meanwhile was given back already: a 2xx then
 * spends its whole cost if the quota still has it (taking off its tome:lapsed marker: UNSETTLE then knows it ran), else
 * nothing, and its answer is withheld (D181), so the quota is never
 * overspent and nothing goes out unpaid. Replies {spent, held, charged (1, or 0 for a 2xx the quota no longer had room
 * for)}, or {-1} and writes nothing when the account is gone (accounts are never deleted: the store was flushed while the
 * request ran, D156).
 */
export const SETTLE = script(
  "settle",
  `local month, account, holdId, cost, spend, quota = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5] == '1', tonumber(ARGV[6])
if redis.call('HEXISTS', 'tome:accounts', account) == 0 then return {-1} end
local spentKey, heldKey, holdsKey = 'tome:spent:' .. month, 'tome:held:' .. month, 'tome:holds:' .. month .. ':' .. account
local kept = redis.call('ZREM', holdsKey, holdId .. ':' .. cost)
if kept == 1 then redis.call('HINCRBY', heldKey, account, -cost) end
local spent = tonumber(redis.call('HGET', spentKey, account) or '0')
local held = tonumber(redis.call('HGET', heldKey, account) or '0')
if spend then
  if kept == 0 and redis.call('EXISTS', 'tome:void:' .. holdId) == 1 then return {spent, held, 0} end
  if kept == 0 and quota >= 0 and quota - spent - held < cost then return {spent, held, 0} end
  if kept == 0 then redis.call('DEL', 'tome:lapsed:' .. holdId) end
  spent = redis.call('HINCRBY', spentKey, account, cost)
  local useKey = 'tome:use:' .. ARGV[7]
  redis.call('HINCRBY', useKey, ARGV[8] .. ':c', cost)
  redis.call('PEXPIRE', useKey, ${USE_DAYS_MS})
end
return {spent, held, 1}`,
);

/**
 * A 2xx's settlement the replica gave up on (no answer within its timeout, or the connection lost): its answer was
 * withheld, "nothing charged", yet Redis may have run the settlement before, or may run it still (a stalled Redis runs
 * what waits in its socket when it goes on). Run once Redis answers again. ARGV: month, account, hold id, cost, the UTC
 * day and key id it was counted to, now and when the hold lapses (both ms, the replica's clock). Its hold still held:
 * the settlement has not run, so the hold goes back and a settlement yet to come spends nothing (tome:void:HOLD). Gone
 * and not marked lapsed (tome:lapsed:HOLD, written by the admission that gave it back, taken off by a settlement that
 * spends after): the settlement ran, and its spending is undone, however long the outage lasted (before, one longer than
 * the lease was taken for a lapse, and stayed charged). Lapsed: admission gave it back, and a settlement yet to come
 * spends nothing; so too past LAPSED_KEPT_MS after its lapse, when the marker may be gone. Replies 1, 2 or 3 for these.
 */
export const UNSETTLE = script(
  "unsettle",
  `local month, account, holdId, cost = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local holdsKey = 'tome:holds:' .. month .. ':' .. account
if redis.call('ZREM', holdsKey, holdId .. ':' .. cost) == 1 then
  redis.call('HINCRBY', 'tome:held:' .. month, account, -cost)
  redis.call('SET', 'tome:void:' .. holdId, '1', 'PX', ${HOLD_LEASE_MS})
  return 1
end
if redis.call('EXISTS', 'tome:lapsed:' .. holdId) == 0 and tonumber(ARGV[7]) < tonumber(ARGV[8]) + ${LAPSED_KEPT_MS}
  and redis.call('HEXISTS', 'tome:accounts', account) == 1 then
  redis.call('HINCRBY', 'tome:spent:' .. month, account, -cost)
  redis.call('HINCRBY', 'tome:use:' .. ARGV[5], ARGV[6] .. ':c', -cost)
  return 2
end
redis.call('SET', 'tome:void:' .. holdId, '1', 'PX', ${HOLD_LEASE_MS})
return 3`,
);

/**
 * An admission the replica gave up on (its request answered 503, "nothing was charged"), which Redis may have run, or
 * run still when it goes on: its hold, if Redis took one, goes back now rather than keep the account's credits until
 * it lapses, with the request's count of the day (D194). ARGV: sha256 of the key, month, hold id, cost, UTC day.
 * Replies 1 when a hold went back; else 0, and marks the hold void (tome:void:HOLD): an admission Redis runs after this
 * (a stalled socket read after the probe's) counts and holds nothing, where it kept its credits for the hold's lease.
 * The marker outlives any lease: an admission later than it takes a hold already lapsed.
 */
export const UNADMIT = script(
  "unadmit",
  `local month, holdId, cost = ARGV[2], ARGV[3], tonumber(ARGV[4])
local auth = redis.call('HGET', 'tome:auth', ARGV[1])
if auth then
  local account, id = string.match(auth, '^%S+ %S+ (%S+) (%S+)$')
  if redis.call('ZREM', 'tome:holds:' .. month .. ':' .. account, holdId .. ':' .. cost) == 1 then
    redis.call('HINCRBY', 'tome:held:' .. month, account, -cost)
    redis.call('HINCRBY', 'tome:use:' .. ARGV[5], id .. ':r', -1)
    return 1
  end
end
redis.call('SET', 'tome:void:' .. holdId, '1', 'PX', ${HOLD_LEASE_MS})
return 0`,
);

/**
 * A change's new version: past the last one, and never below Redis's clock in microseconds. A replica keeps a key as sent at a
 * version (ADMIT); a store flushed, or restored from an older state, counted again from where it stood, and its next change
 * took a version a replica had seen with other contents, which it then went on using (the plan before a change).
 */
const BUMP_VERSION = `local now = redis.call('TIME')
local version = math.max(tonumber(redis.call('GET', 'tome:keys:version') or '0') + 1, tonumber(now[1]) * 1000000 + tonumber(now[2]))
redis.call('SET', 'tome:keys:version', string.format('%d', version))
return version`;

/** The key store at one instant: {version, [id, record, …], [account, json, …]}. */
export const READ_KEYS = script(
  "read-keys",
  `return {redis.call('GET', 'tome:keys:version') or '0', redis.call('HGETALL', 'tome:keys'), redis.call('HGETALL', 'tome:accounts')}`,
);

/**
 * A change by the key tool, if the store is still at the version it read (else -1: read again).
 * ARGV: version, number of keys N, then per key: id, sha256, record, auth entry; then account, json pairs.
 */
export const WRITE_KEYS = script(
  "write-keys",
  `if (redis.call('GET', 'tome:keys:version') or '0') ~= ARGV[1] then return -1 end
local n, i = tonumber(ARGV[2]), 3
for _ = 1, n do
  redis.call('HSET', 'tome:keys', ARGV[i], ARGV[i + 2])
  redis.call('HSET', 'tome:auth', ARGV[i + 1], ARGV[i + 3])
  redis.call('SADD', 'tome:account_keys:' .. string.match(ARGV[i + 3], '^%S+ %S+ (%S+) '), ARGV[i])
  i = i + 4
end
while i <= #ARGV do
  redis.call('HSET', 'tome:accounts', ARGV[i], ARGV[i + 1])
  redis.call('ZADD', 'tome:account_names', 0, ARGV[i])
  i = i + 2
end
${BUMP_VERSION}`,
);

/**
 * `keys import`: a whole store and a month's usage, into a Redis that holds no key and no account (else -1). Everything is checked
 * before the first write: a script's error does not undo the writes made before it.
 * ARGV: JSON {keys: [[id, sha256, record, auth]], accounts: [[name, json]], month, spent: [[account, n]], last_used: [[id, ms]]}.
 */
export const IMPORT = script(
  "import",
  `if redis.call('HLEN', 'tome:keys') > 0 or redis.call('HLEN', 'tome:accounts') > 0 then return -1 end
local data = cjson.decode(ARGV[1])
for _, k in ipairs(data.keys) do
  if not string.match(k[4], '^%S+ %S+ %S+ %S+$') then return redis.error_reply('key ' .. k[1] .. ': an entry that cannot be read') end
end
for _, n in ipairs(data.spent) do
  if type(n[2]) ~= 'number' then return redis.error_reply('account ' .. n[1] .. ': spent is not a number') end
end
for _, u in ipairs(data.last_used) do
  if type(u[2]) ~= 'number' then return redis.error_reply('key ' .. u[1] .. ': last use is not a time') end
end
for _, k in ipairs(data.keys) do
  redis.call('HSET', 'tome:keys', k[1], k[3])
  redis.call('HSET', 'tome:auth', k[2], k[4])
  redis.call('SADD', 'tome:account_keys:' .. string.match(k[4], '^%S+ %S+ (%S+) '), k[1])
end
for _, a in ipairs(data.accounts) do
  redis.call('HSET', 'tome:accounts', a[1], a[2])
  redis.call('ZADD', 'tome:account_names', 0, a[1])
end
redis.call('SET', 'tome:indexed', '1')
for _, s in ipairs(data.spent) do redis.call('HSET', 'tome:spent:' .. data.month, s[1], string.format('%d', s[2])) end
for _, u in ipairs(data.last_used) do redis.call('HSET', 'tome:last_used', u[1], string.format('%d', u[2])) end
${BUMP_VERSION}`,
);

export const SCRIPTS = [ADMIT, SETTLE, UNSETTLE, UNADMIT, READ_KEYS, WRITE_KEYS, IMPORT, ...ACCOUNT_SCRIPTS];
