# Image of the callpipe workers and command. ffmpeg from Debian; TypeScript runs through tsx.
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY . .
ENV CALLPIPE_FFMPEG=/usr/bin/ffmpeg CALLPIPE_FFPROBE=/usr/bin/ffprobe
ENTRYPOINT []
CMD ["node", "--import", "tsx", "workers/all.ts"]
