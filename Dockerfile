FROM python:3.12-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY handlers ./handlers
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.12-slim
COPY --from=build /install /usr/local
WORKDIR /app
USER 10001
EXPOSE 8080
ENTRYPOINT ["argo-why"]
CMD ["serve"]
