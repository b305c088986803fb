/** Social backends: one module per platform, the item model, sign-in exchanges and wiring. */
export type * from "./types.ts";
export { SOCIAL_PLATFORMS } from "./types.ts";
export { hackernews, buildItemRequest, parseItemReplies } from "./hackernews.ts";
export { stackexchange, buildAnswersRequest, parseAnswers, siteOf } from "./stackexchange.ts";
export { github } from "./github.ts";
export { lemmy } from "./lemmy.ts";
export { reddit, redditAuth, redditTokenUrl } from "./reddit.ts";
export { bluesky, blueskyAuth, jwtExpiryMs } from "./bluesky.ts";
export { mastodon } from "./mastodon.ts";
export { authenticate, createTokenCache, signInFailure, withPlatformAuth, AUTH_FAILURE_HEADER } from "./auth.ts";
export type { TokenCache, TokenExchange, TokenOutcome } from "./auth.ts";
export { createSocialBackends } from "./registry.ts";
export type { SocialBackends, SocialBackendsOptions } from "./registry.ts";
