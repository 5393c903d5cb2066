/** Keys, rate limits and quotas in Redis (TOME_REDIS_URL), shared by replicas: the server's side and the key tool's. */
export { KEYS_LOST, RedisAccess, UNAVAILABLE_RETRY_AFTER } from "./access";
export { checkRedisUrl } from "./connection";
export { RedisKeyStore } from "./store";
