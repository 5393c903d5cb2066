/** GET /v1/license (api.md 4.7), GET /v1/meta (api.md 4.8; D17) and GET /healthz. */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import {
  BAD_REQUEST,
  CACHED_HEADERS,
  COMMON_HEADERS,
  described,
  HEALTH_UNAVAILABLE,
  JSON_ONLY,
  KEY_ERRORS,
  KEYED,
  NOT_MODIFIED,
  OPEN,
  UNREADABLE,
} from "../docs";
import { quotaGate } from "../params";
import { Health, LicenseResponse, MetaResponse } from "../schemas";

export const aboutRoutes = ({ license, meta, health }: ApiContext) =>
  new Elysia()
    .get("/v1/license", () => license, {
      transform: quotaGate,
      parse: JSON_ONLY,
      response: {
        200: described(LicenseResponse, "License, source and attribution requirements", { headers: CACHED_HEADERS }),
        ...NOT_MODIFIED,
        ...BAD_REQUEST,
        ...KEY_ERRORS,
      },
      detail: {
        ...KEYED,
        operationId: "getLicense",
        tags: ["Service"],
        summary: "License and attribution requirements",
        description: "How the content is licensed, what was changed, and how to credit it when you reuse it.",
      },
    })
    .get("/v1/meta", () => meta, {
      transform: quotaGate,
      parse: JSON_ONLY,
      response: {
        200: described(MetaResponse, "Search engine version, indexes, source and dataset", { headers: CACHED_HEADERS }),
        ...NOT_MODIFIED,
        ...BAD_REQUEST,
        ...KEY_ERRORS,
      },
      detail: {
        ...KEYED,
        operationId: "getMeta",
        tags: ["Service"],
        summary: "Dataset and index metadata",
        description:
          "The snapshot served now: its build, indexes, source and size, its file and when it was loaded. " +
          "The server moves to a newer snapshot when one appears; every answer names the one it came from in X-Snapshot.",
      },
    })
    .get("/healthz", health, {
      parse: JSON_ONLY,
      response: {
        200: described(Health, "The server is up and its snapshot loaded", { headers: COMMON_HEADERS }),
        ...UNREADABLE,
        ...HEALTH_UNAVAILABLE,
      },
      detail: {
        ...OPEN,
        operationId: "getHealth",
        tags: ["Service"],
        summary: "Liveness",
        description: "Answers without a key once the snapshot is loaded.",
      },
    });
