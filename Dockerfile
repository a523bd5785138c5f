# sixpin as a container image: a static binary on distroless, run as a
# non-root user. Build and push it where your cluster pulls from:
#   docker build -t registry.example.com/sixpin:v1 .
#   docker push registry.example.com/sixpin:v1
# cmd/sixpin/internal/kube/dockerfile_test.go builds the binary with this file's build line and
# checks that it is static.

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a change to the code reuses the download layer.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# No cgo: every dependency is pure Go (modernc.org/sqlite included), so the
# binary needs no libc and runs on distroless/static or scratch.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/sixpin ./cmd/sixpin

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sixpin /sixpin
# distroless's nonroot user, by number: Kubernetes can verify runAsNonRoot
# only against a numeric USER.
USER 65532:65532
ENTRYPOINT ["/sixpin"]
