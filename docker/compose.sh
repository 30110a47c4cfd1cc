# Sourced by docker/lab.sh and docker/hub/hub.sh: what both check before Compose runs.
#   compose_choose   sets COMPOSE to `docker compose` (the v2 plugin) or `docker-compose`
#                    (v1.29, Debian's); returns 1 with neither
#   port_free PORT   whether 127.0.0.1:PORT can be bound
compose_choose() {
    if docker compose version >/dev/null 2>&1; then
        COMPOSE="docker compose"
    elif command -v docker-compose >/dev/null 2>&1; then
        COMPOSE="docker-compose"
    else
        return 1
    fi
}

port_free() {
    python3 -c "import socket,sys; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', int(sys.argv[1])))" "$1" 2>/dev/null
}
