/** GET /v1/license (api.md 4.7), GET /v1/meta (api.md 4.8; D17) and GET /healthz. */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { COMMON_HEADERS, described, JSON_ONLY, KEY_ERRORS, KEYED } from "../docs";
import { quotaGate } from "../params";
import { Health, LicenseResponse, MetaResponse } from "../schemas";

export const aboutRoutes = ({ license, meta, health }: ApiContext) =>
  new Elysia()
    .get("/v1/license", () => license, {
      transform: quotaGate,
      parse: JSON_ONLY,
      response: { 200: described(LicenseResponse, "License, source and attribution requirements"), ...KEY_ERRORS },
      detail: { ...KEYED, summary: "License and attribution requirements", description: "How the content is licensed and how to credit it (api.md 4.7)." },
    })
    .get("/v1/meta", () => meta, {
      transform: quotaGate,
      parse: JSON_ONLY,
      response: { 200: described(MetaResponse, "Search engine version, indexes, source and dataset"), ...KEY_ERRORS },
      detail: { ...KEYED, summary: "Dataset and index metadata", description: "The loaded snapshot and its indexes (D17)." },
    })
    .get("/healthz", health, {
      parse: JSON_ONLY,
      response: { 200: described(Health, "The server is up and its snapshot loaded", COMMON_HEADERS) },
      detail: { summary: "Liveness", description: "Answers without a key once the snapshot is loaded." },
    });
