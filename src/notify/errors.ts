/**
 * The notifier throws the store's typed errors (one catalogue for the API):
 * NotFoundError (404) for an unknown alert id or integration name,
 * ConflictError (409) for a retry of a pending or delivered alert.
 * These aliases keep older imports working; prefer the store's names.
 */
export { ConflictError as NotifyConflictError, NotFoundError as NotifyNotFoundError } from "../store/errors.js";
