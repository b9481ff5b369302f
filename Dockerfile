# probetown CLI image: the same code as the embedded default, for the compose setup.
# Pinned to the Node the project's devDependency `node` pins (package.json): the CLI runs its .ts
# sources directly, which needs Node ≥ 22.18, and a floating tag would change under the image.
FROM node:22.23.3-bookworm-slim
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
