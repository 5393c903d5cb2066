/** GET /v1/license (api.md 4.7), GET /v1/meta (api.md 4.8; D17) and GET /healthz. */
import { Elysia } from "elysia";
import type { ApiContext } from "../context";
import { Health, LicenseResponse, MetaResponse } from "../schemas";

export const aboutRoutes = ({ license, meta }: ApiContext) =>
  new Elysia()
    .get("/v1/license", () => license, {
      response: { 200: LicenseResponse },
      detail: { summary: "License and attribution requirements", description: "How the content is licensed and how to credit it (api.md 4.7)." },
    })
    .get("/v1/meta", () => meta, {
      response: { 200: MetaResponse },
      detail: { summary: "Dataset and index metadata", description: "The loaded snapshot and its indexes (D17)." },
    })
    .get("/healthz", () => ({ status: "ok" as const }), {
      response: { 200: Health },
      detail: { summary: "Liveness", description: "Answers without a key once the snapshot is loaded." },
    });
