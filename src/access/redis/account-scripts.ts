/**
 * The dashboard's Lua scripts (D81, D82): one account and its keys, a page of accounts in name
 * order, one account's month of usage, and a session kept with its account's sessions bounded.
 * The keys they use are listed with the others in scripts.ts.
 */
import { script } from "./connection";

/**
 * What the dashboard's scripts start with: the per-account index (tome:account_keys:NAME,
 * tome:account_names) built once from tome:auth and tome:accounts if the store was written
 * before it (its replicas build it at start: RedisAccess.start). Keys and accounts written
 * since are indexed as they are written (WRITE_KEYS, IMPORT).
 */
const INDEX_PRELUDE = `local function index()
  if redis.call('GET', 'tome:indexed') == '1' then return end
  for _, entry in ipairs(redis.call('HVALS', 'tome:auth')) do
    local account, id = string.match(entry, '^%S+ %S+ (%S+) (%S+)$')
    redis.call('SADD', 'tome:account_keys:' .. account, id)
  end
  for _, name in ipairs(redis.call('HKEYS', 'tome:accounts')) do redis.call('ZADD', 'tome:account_names', 0, name) end
  redis.call('SET', 'tome:indexed', '1')
end
local function hmget(key, fields)
  local out = {}
  for i = 1, #fields, 500 do
    local part = redis.call('HMGET', key, unpack(fields, i, math.min(i + 499, #fields)))
    for _, v in ipairs(part) do out[#out + 1] = v end
  end
  return out
end
`;

export const INDEX = script("index", `${INDEX_PRELUDE}index()\nreturn 1`);

/** One account and its keys: {version, account's JSON or "", [record, …]}. ARGV: the account's name. */
export const READ_ACCOUNT = script(
  "read-account",
  `${INDEX_PRELUDE}index()
local ids = redis.call('SMEMBERS', 'tome:account_keys:' .. ARGV[1])
local records = {}
for _, r in ipairs(hmget('tome:keys', ids)) do if r then records[#records + 1] = r end end
return {redis.call('GET', 'tome:keys:version') or '0', redis.call('HGET', 'tome:accounts', ARGV[1]) or '', records}`,
);

/** At most ARGV[2] accounts in name order after ARGV[1] ("": from the first): {[name, …], [json, …], more (0/1)}. */
export const ACCOUNTS_AFTER = script(
  "accounts-after",
  `${INDEX_PRELUDE}index()
local limit = tonumber(ARGV[2])
local from = ARGV[1] == '' and '-' or ('(' .. ARGV[1])
local names = redis.call('ZRANGEBYLEX', 'tome:account_names', from, '+', 'LIMIT', 0, limit + 1)
local more = 0
if #names > limit then more = 1; names[#names] = nil end
return {names, hmget('tome:accounts', names), more}`,
);

/**
 * One account's month for the dashboard. ARGV: month (YYYY-MM), account, the month's number of
 * days, then the key ids. Replies {spent, [last use (ms) of each key], [[requests, credits of
 * each key] of each day]}, nil where nothing was counted.
 */
export const ACCOUNT_USAGE = script(
  "account-usage",
  `${INDEX_PRELUDE}local month, days = ARGV[1], tonumber(ARGV[3])
local ids, fields = {}, {}
for i = 4, #ARGV do
  ids[#ids + 1] = ARGV[i]
  fields[#fields + 1] = ARGV[i] .. ':r'
  fields[#fields + 1] = ARGV[i] .. ':c'
end
local byDay = {}
for d = 1, days do byDay[d] = hmget(string.format('tome:use:%s-%02d', month, d), fields) end
return {redis.call('HGET', 'tome:spent:' .. month, ARGV[2]) or '0', hmget('tome:last_used', ids), byDay}`,
);

/**
 * Keeps a dashboard session, its account's sessions bounded (D82): ARGV: the cookie's sha256, the
 * session (JSON), its end (ms), its account's sessions' key, now (ms), the most an account keeps.
 * Ended sessions leave the account's set; past the most, its oldest sessions end.
 */
export const PUT_SESSION = script(
  "put-session",
  `local hash, ends, set, most = ARGV[1], ARGV[3], ARGV[4], tonumber(ARGV[6])
redis.call('SET', 'tome:session:' .. hash, ARGV[2], 'PXAT', ends)
redis.call('ZREMRANGEBYSCORE', set, '-inf', ARGV[5])
redis.call('ZADD', set, ends, hash)
local over = redis.call('ZCARD', set) - most
if over > 0 then
  for _, old in ipairs(redis.call('ZRANGE', set, 0, over - 1)) do redis.call('DEL', 'tome:session:' .. old) end
  redis.call('ZREMRANGEBYRANK', set, 0, over - 1)
end
redis.call('PEXPIREAT', set, ends)
return 1`,
);

export const ACCOUNT_SCRIPTS = [INDEX, READ_ACCOUNT, ACCOUNTS_AFTER, ACCOUNT_USAGE, PUT_SESSION];
