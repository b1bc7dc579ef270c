/**
 * Canary secrets. Test configs plant these in every secret slot (model API key, bot tokens,
 * signing secrets, webhook secrets). They look like real credentials so that format checks and
 * redaction patterns treat them as such, and each one is a unique string, so finding it in a log
 * (see `canary-scan.ts`) proves a leak.
 */

/** Planted as the gateway's Anthropic API key; the fake model API records when it arrives. */
export const CANARY_ANTHROPIC_KEY = 'sk-ant-api03-CANARYq7Xm2Lr9Vt4Zp8Kc1Hn6Wd3Bf5Jy0Gs-Ue_XoTaRiEl9Nb2Mv7Yk4Pq1Sw8Dz3Cu6Fh0Ij5Og2Rk-CANARYAA';

/** Planted as a Telegram bot token (`<bot id>:<35 chars>`). */
export const CANARY_TELEGRAM_TOKEN = '123456:CANARYtg7Kx2Qm9Lr4Vt8Zp1Hc6Wn3Bd5Fj';

/** Planted as a Slack bot token (`xoxb-<team>-<bot>-<24 chars>`). */
export const CANARY_SLACK_BOT_TOKEN = 'xoxb-7000000000001-7000000000002-CANARYsb4Kx9Qm2Lr7Vt3Z';

/** Planted as a Slack app-level (Socket Mode) token. */
export const CANARY_SLACK_APP_TOKEN = 'xapp-1-A0CANARY001-7000000000003-CANARYapp5e1c9b7a3f2d8e6c4b0a9f7e5d3c1b8a6f4e2d0c9b7a5f3e1d8c6b4a2f0e9';

/** Planted as a Slack signing secret (32 hex characters, like the real ones). */
export const CANARY_SLACK_SIGNING_SECRET = 'c4a7a9e1d0b3f5e8a2c6d9b1e4f7a0c3';

/** Planted as a webhook secret (e.g. Telegram `secret_token`: `A-Z a-z 0-9 _ -`). */
export const CANARY_WEBHOOK_SECRET = 'CANARY_whsec_9fK2xQ7mLp4Vt8Zr1Hc6Wn3Bd5';

/** Planted as a web search API key (Brave Search, Tavily). */
export const CANARY_SEARCH_API_KEY = 'CANARY_search_Qm7Lr2Vt9Zp4Kc8Hn1Wd6Bf3';

/** Every canary by constant name; the scanner reports a leak by this name, never by value. */
export const CANARIES_BY_NAME: Readonly<Record<string, string>> = Object.freeze({
  CANARY_ANTHROPIC_KEY,
  CANARY_TELEGRAM_TOKEN,
  CANARY_SLACK_BOT_TOKEN,
  CANARY_SLACK_APP_TOKEN,
  CANARY_SLACK_SIGNING_SECRET,
  CANARY_WEBHOOK_SECRET,
  CANARY_SEARCH_API_KEY,
});

/** Every canary value. */
export const ALL_CANARIES: readonly string[] = Object.freeze(Object.values(CANARIES_BY_NAME));
