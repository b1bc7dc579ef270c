# syntax=docker/dockerfile:1
# Switchboard gateway image: built with the full toolchain, run with production dependencies only,
# as a non-root user, with all state (SQLite database, credentials, workspaces) in the /data volume.
# Operations guide: docs/operations.md.
ARG NODE_IMAGE=node:20-bookworm-slim

# Workspace manifests and the toolchain better-sqlite3 needs when no prebuilt binary matches.
FROM ${NODE_IMAGE} AS base
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY packages/agent/package.json packages/agent/
COPY packages/core/package.json packages/core/
COPY packages/store/package.json packages/store/
COPY packages/tools/package.json packages/tools/
COPY packages/channel-websocket/package.json packages/channel-websocket/
COPY packages/channel-telegram/package.json packages/channel-telegram/
COPY packages/channel-slack/package.json packages/channel-slack/
COPY packages/channel-webhook/package.json packages/channel-webhook/
COPY packages/channel-openai/package.json packages/channel-openai/
COPY packages/testkit/package.json packages/testkit/
COPY packages/console/package.json packages/console/
COPY apps/gateway/package.json apps/gateway/

# Compile every workspace (the root `prepare` script would run tsc before the sources exist, so
# install scripts are skipped and only the native module is built).
FROM base AS build
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.base.json tsconfig.json ./
COPY packages packages
COPY apps apps
# The console (a Vite single-page app) is built here; the runtime image only serves its dist.
RUN npx tsc -b && npm run build -w @switchboard/console

# Production dependencies only.
FROM base AS prod-deps
RUN npm ci --omit=dev --ignore-scripts && npm rebuild better-sqlite3 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# bubblewrap: the exec tool's sandbox (util-linux, with prlimit and setpriv, is in the base image).
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    SWITCHBOARD_HOST=0.0.0.0 \
    SWITCHBOARD_PORT=7420 \
    SWITCHBOARD_DATA_DIR=/data \
    SWITCHBOARD_CONFIG=/app/config/switchboard.json5
WORKDIR /app
COPY --from=prod-deps /app /app
COPY --from=build /app/packages/agent/dist packages/agent/dist
COPY --from=build /app/packages/core/dist packages/core/dist
COPY --from=build /app/packages/store/dist packages/store/dist
COPY --from=build /app/packages/tools/dist packages/tools/dist
COPY --from=build /app/packages/channel-websocket/dist packages/channel-websocket/dist
COPY --from=build /app/packages/channel-telegram/dist packages/channel-telegram/dist
COPY --from=build /app/packages/channel-slack/dist packages/channel-slack/dist
COPY --from=build /app/packages/channel-webhook/dist packages/channel-webhook/dist
COPY --from=build /app/packages/channel-openai/dist packages/channel-openai/dist
COPY --from=build /app/packages/console/dist packages/console/dist
COPY --from=build /app/apps/gateway/dist apps/gateway/dist
COPY migrations migrations
COPY migrations-pg migrations-pg
COPY config config
# /data holds the database, the credentials file and the agents' workspaces; only `node` writes it.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 7420
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SWITCHBOARD_PORT || 7420) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "apps/gateway/dist/cli.js"]
CMD ["start"]
