# Image of the callpipe workers and command. ffmpeg from Debian; TypeScript runs on Node's own type
# stripping (Node 24 LTS; 22.18 and later work too), with the production dependencies only.
FROM node:24-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
# The build id of the workers' Worker Deployment Version (workers/versioning.ts): no git in the image.
ARG CALLPIPE_BUILD_ID=dev
ENV CALLPIPE_BUILD_ID=$CALLPIPE_BUILD_ID
# The workers' metrics and health endpoint (/metrics, /readyz, /livez) listens on every interface of the
# container: on loopback (the default outside containers) a published port or a probe reaches nothing.
ENV CALLPIPE_FFMPEG=/usr/bin/ffmpeg CALLPIPE_FFPROBE=/usr/bin/ffprobe \
    CALLPIPE_METRICS_HOST=0.0.0.0 CALLPIPE_METRICS_PORT=9464
EXPOSE 9464
# Healthy once every worker of the container polls its task queue (/readyz); bundling the workflows and
# connecting to Temporal take a while at start.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "bin/http-probe.js"]
ENTRYPOINT []
CMD ["node", "workers/all.ts"]
