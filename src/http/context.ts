/** What the routes serve from: one loaded snapshot, its engine, and its resources. */
import { basename } from "node:path";
import type { Engine } from "../search";
import { answers, type Answers } from "./answers";
import { Attributions, LICENSE } from "./attribution";
import type { PoolGeneration } from "./pool/pool";
import { Resources } from "./resources";
import type { Health, LicenseResponse, MetaResponse } from "./schemas";
import { tomeVersion } from "./version";

export interface ApiContext {
  engine: Engine;
  /** The answers' bodies, for the routes and the MCP tools alike. */
  answers: Answers;
  resources: Resources;
  attributions: Attributions;
  /** /v1/license and /v1/meta never change while a snapshot is served (a swap makes a new context). */
  license: LicenseResponse;
  meta: MetaResponse;
  /** What /healthz says: ok, or degraded with the problems an operator must see. */
  health: () => Health;
  /** With a search pool: this snapshot in its workers, where searches, lucky and the MCP search tools are answered. */
  searches?: PoolGeneration;
}

const HEALTHY: Health = { status: "ok" };

/** The problems of the parts the server depends on (the key store), as /healthz reports them. */
export type HealthCheck = () => { ok: boolean; problems: string[] };

export function apiContext(
  engine: Engine,
  checks: HealthCheck[] = [],
  searchTimeoutMs?: number,
  searches?: PoolGeneration,
): ApiContext {
  const m = engine.snapshot.meta;
  const attributions = new Attributions(m);
  const resources = new Resources(m, attributions);
  const license = attributions.licenseDocument();
  const health = () => {
    const problems = checks.flatMap((check) => check().problems);
    return problems.length ? { status: "degraded" as const, problems } : HEALTHY;
  };
  return {
    engine,
    searches,
    answers: answers(engine, resources, attributions, searchTimeoutMs),
    health,
    resources,
    attributions,
    license,
    meta: {
      search_engine_version: { commitSha: m.contentHash, commitDate: m.createdAt, pkgVersion: tomeVersion },
      indexes: { pages: `${m.wiki.dbname}-pages`, chunks: `${m.wiki.dbname}-chunks` },
      content_source: { name: license.source.name, project: m.wiki.host, license: { ...LICENSE } },
      dataset: {
        created_at: m.createdAt,
        indexed_pages: m.indexedPages,
        indexed_chunks: m.indexedChunks,
        skipped_redirects: m.skippedRedirects,
        snapshot: basename(engine.snapshot.path),
        loaded_at: new Date().toISOString(),
      },
      attribution: attributions.dataset,
    },
  };
}
