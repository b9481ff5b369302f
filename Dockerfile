# probetown CLI image: the same code as the embedded default, for the compose setup.
FROM node:22-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY actors ./actors
COPY events ./events
COPY infra ./infra
COPY services ./services
COPY data ./data
COPY bin ./bin
ENTRYPOINT ["node", "services/cli/main.ts"]
CMD ["run", "auratown", "--seed", "42"]
