export { Authenticator, type AuthConfig, type AuthResult } from "./authenticator.js";
export { installAuthGate, mayCall } from "./gate.js";
export { readTokenFile, parseTokenFile } from "./tokenFile.js";
export { compileRbac, roleAllows } from "./rbac.js";
