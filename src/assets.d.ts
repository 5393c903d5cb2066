// Files imported `with { type: "file" }` (fonts, Swagger UI's assets, the sample dump): each is its path;
// `with { type: "text" }` (the dashboard's CSS, script and icon): each is its content.
declare module "*.woff" {
  const path: string;
  export default path;
}
declare module "*.ttf" {
  const path: string;
  export default path;
}
declare module "*.png" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*.bz2" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "*.svg" {
  const text: string;
  export default text;
}
declare module "*/dashboard.js" {
  const text: string;
  export default text;
}
