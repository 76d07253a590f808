# A node of a Ray cluster for skillassay's distributed executor (head or worker): everything one run needs (the
# package with its Ray extra, the node tools and agent CLIs, bubblewrap and strace, the fixtures' runtimes), installed
# by the project's own set-up script. See docs/distributed.md.
#
#   docker build -f deploy/ray-worker.Dockerfile -t skillassay-ray:latest .
#
# Node 20 (the agent CLIs need it) on Debian bookworm, whose Python is 3.11: the driver must run the same Python minor
# version and the same Ray version as every node.
FROM node:20-bookworm-slim

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      python3 python3-venv python3-pip git ca-certificates procps \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/skillassay
COPY . .
# setup.sh installs the Debian packages it needs (git, chromium, bubblewrap, strace), .venv with skillassay[test,ray]
# and node/node_modules from the lock file
RUN bash scripts/setup.sh \
 && rm -rf /var/lib/apt/lists/* /root/.cache/pip /root/.npm

ENV PATH=/opt/skillassay/.venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1

# KubeRay runs its own `ray start`; run by hand, the container is a head node
CMD ["ray", "start", "--head", "--port=6379", "--block"]
