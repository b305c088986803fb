/** Egress policy for page fetches: address classification, the allow-list, URL checks, errors. */
export * from "./address-policy.ts";
export * from "./allow-list.ts";
export * from "./url-policy.ts";
export * from "./fetch-errors.ts";
