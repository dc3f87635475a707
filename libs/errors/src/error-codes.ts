/** Every value the Error body's `code` can take, with the HTTP status it travels with. */
export const ERROR_STATUS = {
  invalid_json: 400,
  unsupported_media_type: 400,
  validation_failed: 400,
  invalid_parameter: 400,
  malformed_request: 400,
  missing_api_key: 401,
  invalid_authorization: 401,
  invalid_api_key: 401,
  insufficient_scope: 403,
  api_key_rotated_out: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  insufficient_stock: 409,
  pet_not_available: 409,
  order_not_cancellable: 409,
  category_in_use: 409,
  pet_has_open_orders: 409,
  category_exists: 409,
  idempotency_key_in_use: 409,
  last_admin_key: 409,
  endpoint_sunset: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  key_expiry_too_late: 422,
  quota_exceeded: 422,
  rate_limit_exceeded: 429,
  api_key_banned: 429,
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];
