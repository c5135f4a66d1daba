# syntax=docker/dockerfile:1
# tollgate's image, for those who build with Docker:
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=1.2.3 --build-arg COMMIT=$(git rev-parse HEAD) \
#     --build-arg DATE=$(git log -1 --format=%cI) -t tollgate:1.2.3 .
#
# It gives the image scripts/release writes as an OCI layout without a
# daemon (tools/release/cmd/ociimage): FROM scratch, the static binary,
# CA certificates, the numeric non-root user 65532, a /data volume for the
# SQLite database and the generated master key, the gateway on
# 0.0.0.0:8080.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS TARGETARCH
ARG VERSION=dev COMMIT=unknown DATE=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X github.com/tollgate/tollgate/internal/cli.Version=$VERSION -X github.com/tollgate/tollgate/internal/cli.Commit=$COMMIT -X github.com/tollgate/tollgate/internal/cli.Date=$DATE" \
      -o /rootfs/usr/bin/tollgate ./cmd/tollgate
RUN mkdir -p /rootfs/etc/ssl/certs /data \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ \
 && printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n' >/rootfs/etc/passwd \
 && printf 'root:x:0:\nnonroot:x:65532:\n' >/rootfs/etc/group

FROM scratch
ARG VERSION=dev COMMIT=unknown DATE=unknown
COPY --from=build /rootfs/ /
# /data is the gateway's (the database and the generated master key);
# created by this COPY, it takes the --chown.
COPY --from=build --chown=65532:65532 --chmod=0750 /data /data
ENV PATH=/usr/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt TOLLGATE_MASTER_KEY_FILE=/data/tollgate.master-key
LABEL org.opencontainers.image.title="tollgate" \
      org.opencontainers.image.description="An LLM API gateway speaking the Anthropic Messages, OpenAI Chat Completions and Responses APIs" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$COMMIT" \
      org.opencontainers.image.created="$DATE" \
      org.opencontainers.image.source="https://github.com/tollgate/tollgate" \
      org.opencontainers.image.url="https://github.com/tollgate/tollgate" \
      org.opencontainers.image.licenses="Apache-2.0"
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 8080/tcp
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 CMD ["/usr/bin/tollgate", "healthcheck"]
ENTRYPOINT ["/usr/bin/tollgate", "serve", "--addr", "0.0.0.0:8080"]
