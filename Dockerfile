# syntax=docker/dockerfile:1
#
# toolward with its suite: the binary (the bundled MCP server and its data
# are compiled in), cases/, configs/ and the fixtures configs refer to, in
# /suite. Runs as an unprivileged user; results go to /results (mount a
# volume there).
#
#   docker build -t toolward .
#   docker run --rm -v "$PWD/out:/results" toolward run --out /results/demo configs/demo.cue
#
# deploy/deploy_test.go runs this file's build-stage steps marked
# "mirrored" (with /out elsewhere) and then the Kubernetes manifests
# against the result, so a change here is tested without a Docker engine.

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# mirrored: the binary, static (the SQLite engine is WebAssembly, no cgo)
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/toolward ./cmd/toolward
# mirrored: the suite, with every fixture a config may name by path (the
# Go test fakes left out)
RUN mkdir -p /out/suite && cp -R cases configs fixtures /out/suite/ && rm -r /out/suite/fixtures/fakes /out/suite/fixtures/*.go
# mirrored: the suite validates and the offline demo runs from it alone
RUN cd /out/suite && /out/toolward validate && /out/toolward run --out /out/demo-check configs/demo.cue && rm -r /out/demo-check

FROM alpine:3.22
RUN addgroup -S -g 10001 toolward \
 && adduser -S -D -H -u 10001 -G toolward -h /suite toolward \
 && mkdir /results && chown toolward:toolward /results
COPY --from=build /out/toolward /usr/local/bin/toolward
COPY --from=build /out/suite /suite
WORKDIR /suite
USER 10001:10001
VOLUME /results
ENTRYPOINT ["toolward"]
CMD ["run", "--out", "/results/demo", "configs/demo.cue"]
