/** Tome's version (package.json): /v1/meta's search_engine_version.pkgVersion, as Tome's own engine answers the searches (D76). */
import { version } from "../../package.json";

export const tomeVersion: string = version;
