import { duration } from '@switchboard/core';
import { z } from 'zod';

/** `console.basePath`: normalised to start and end with `/` (`/admin` → `/admin/`); letters, digits, `-`, `_`, `.` and `/` only. */
const basePath = z
  .string()
  .min(1)
  .max(200)
  .regex(/^\/?[A-Za-z0-9._\-/]*$/, 'use a URL path of letters, digits, ".", "_", "-" and "/" (e.g. "/" or "/console/")')
  .transform((p) => `/${p.replace(/^\/+|\/+$/g, '')}/`.replace(/^\/\/$/, '/'))
  .refine((p) => !p.split('/').some((part) => part === '.' || part === '..'), 'must not contain "." or ".." segments');

/** `console.publicOrigin`: an `http(s)://host[:port]` origin, without a path. */
const origin = z
  .url({ protocol: /^https?$/ })
  .refine((u) => new URL(u).origin === u.replace(/\/$/, ''), 'must be an origin only (scheme, host and port), e.g. "https://switchboard.example.com"')
  .transform((u) => new URL(u).origin);

/**
 * `console`: the operators' console and the team's web chat (docs/console.md), a single-page app
 * served by the gateway, with cookie sign-in for the control API and the web chat's WebSocket.
 */
export const consoleSchema = z
  .strictObject({
    /** Serve the console at `basePath` (default true); the sign-in routes and cookie auth work only when enabled. */
    enabled: z.boolean().default(true),
    /** Where the console is served (default `/`). */
    basePath: basePath.default('/'),
    /**
     * The browser origin the console is opened from (default: the listener's `http://host:port`): the
     * only Origin a cookie-authenticated WebSocket upgrade or sign-in is accepted from.
     */
    publicOrigin: origin.optional(),
    /** How long a console session lasts after sign-in (default 12 h). */
    sessionTtl: duration.refine((ms) => ms >= 1000, 'must be at least 1s').default(12 * 3_600_000),
    /** How often the live stream (`GET /api/v1/events`) sends a `stats` event (default 5 s). */
    statsInterval: duration.refine((ms) => ms >= 200, 'must be at least 200ms').default(5_000),
    /** How often the live stream sends a `: ping` comment (default 15 s). */
    pingInterval: duration.refine((ms) => ms >= 200, 'must be at least 200ms').default(15_000),
    /** The built console's directory (default: the installed `@switchboard/console` package's `dist`). */
    root: z.string().min(1).max(4096).optional(),
  })
  .prefault({});

/** The `console` section as parsed. */
export type ConsoleConfig = z.output<typeof consoleSchema>;
