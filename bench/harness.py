"""Shared benchmark plumbing: a service in its own process, latency statistics, load loops."""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.clients import make_channel

ROOT = Path(__file__).resolve().parents[1]
EVAL_DIR = ROOT.parent / "shared" / "eval"
# Data split in two by alternating items (records, articles): tune on one half, report the other.
HALVES = {"all": (0, 1), "tune": (0,), "report": (1,)}


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class ServiceProcess:
    """`glossator serve|up` in a child process, so its memory and CPU are its own."""

    process: subprocess.Popen
    ports: dict[str, int]
    name: str = ""  # the service, when the process serves one

    @property
    def pid(self) -> int:
        return self.process.pid

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _suite_env(data_dir: Path, extra_env: dict[str, str] | None) -> tuple[dict[str, int], dict[str, str]]:
    """Free ports for the three services, and the environment that points them at each other."""
    ports = {name: free_port() for name in ("agent", "retrieval", "validation")}
    env = dict(os.environ, **(extra_env or {}))
    for name, port in ports.items():
        env[f"GLOSSATOR_{name.upper()}_PORT"] = str(port)
        env[f"GLOSSATOR_{name.upper()}_DATA_DIR"] = str(data_dir)
    env["GLOSSATOR_AGENT_RETRIEVAL_TARGET"] = f"127.0.0.1:{ports['retrieval']}"
    env["GLOSSATOR_AGENT_VALIDATION_TARGET"] = f"127.0.0.1:{ports['validation']}"
    return ports, env


def spawn_python(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """`python ARGS` in a child process that is stopped (SIGTERM) when the bench dies, however it
    dies: a bench killed mid-run left `glossator up` holding the embedded store, and the next run
    failed with "open in another process". bench.parent_bound says why it is not a preexec_fn."""
    return subprocess.Popen(
        [sys.executable, "-m", "bench.parent_bound", str(os.getpid()), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _spawn(command: list[str], env: dict[str, str]) -> subprocess.Popen:
    return spawn_python(["-m", "services.cli", *command], env)


async def start_services(
    data_dir: Path, services: Sequence[str], extra_env: dict[str, str] | None = None
) -> ServiceProcess:
    """One service with `serve`, or the whole suite with `up`; waits until every health check says SERVING."""
    ports, env = _suite_env(data_dir, extra_env)
    command = ["serve", services[0]] if len(services) == 1 else ["up", "--log-format", "json"]
    started = ServiceProcess(_spawn(command, env), {name: ports[name] for name in services})
    for name in services:
        await wait_serving(f"127.0.0.1:{ports[name]}", started.process)
    return started


async def start_service_processes(
    data_dir: Path, extra_env: dict[str, str] | None = None, agents: int = 1
) -> list[ServiceProcess]:
    """The three services each in a process of its own (`serve`), as a deployment runs them: their
    Python code no longer shares one interpreter lock. `agents` agent replicas, each with its own
    port and its own data directory for sessions (a deployment shares Redis instead)."""
    ports, env = _suite_env(data_dir, extra_env)
    started = []
    try:
        for name in ("retrieval", "validation", "agent"):
            started.append(ServiceProcess(_spawn(["serve", name], env), ports, name))
            await wait_serving(f"127.0.0.1:{ports[name]}", started[-1].process)
        for replica in range(1, agents):
            port = free_port()
            replica_env = dict(env, GLOSSATOR_AGENT_PORT=str(port))
            replica_env["GLOSSATOR_AGENT_DATA_DIR"] = str(data_dir / f"agent-replica-{replica}")
            started.append(ServiceProcess(_spawn(["serve", "agent"], replica_env), {"agent": port}, "agent"))
            await wait_serving(f"127.0.0.1:{port}", started[-1].process)
    except BaseException:
        for service in started:
            service.stop()
        raise
    return started


def agent_target(processes: list[ServiceProcess]) -> str:
    """A target over every agent process, balanced round_robin by the channel's service config."""
    return "ipv4:" + ",".join(f"127.0.0.1:{p.ports['agent']}" for p in processes if p.name == "agent")


async def wait_serving(
    target: str, process: subprocess.Popen, timeout: float = 180, period: float = 0.2
) -> list[str]:
    """Polls health until SERVING; returns the distinct statuses seen on the way, in order (what a
    readiness probe sees: "no answer" before the port opens)."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    async with make_channel(target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the service process exited with {process.returncode}")
            try:
                reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=2)
                status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.aio.AioRpcError:
                status = "no answer"
            if not seen or seen[-1] != status:
                seen.append(status)
            if status == "SERVING":
                return seen
            await asyncio.sleep(period)
    raise TimeoutError(f"{target} did not become SERVING in {timeout} s")


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True)
class LoadResult:
    concurrency: int
    calls: int
    p50_ms: float
    p99_ms: float
    qps: float
    latencies_ms: tuple[float, ...] = field(default=(), repr=False)
    elapsed_s: float = 0.0

    @classmethod
    def of(cls, concurrency: int, latencies_ms: Sequence[float], elapsed_s: float) -> LoadResult:
        return cls(
            concurrency,
            len(latencies_ms),
            statistics.median(latencies_ms),
            percentile(latencies_ms, 0.99),
            len(latencies_ms) / elapsed_s,
            tuple(latencies_ms),
            elapsed_s,
        )

    @classmethod
    def merged(cls, parts: Sequence[LoadResult]) -> LoadResult:
        """One result of several runs at the same concurrency, as if they had run back to back."""
        latencies = [ms for part in parts for ms in part.latencies_ms]
        return cls.of(parts[0].concurrency, latencies, sum(part.elapsed_s for part in parts))

    def as_dict(self) -> dict:
        return {
            "concurrency": self.concurrency,
            "calls": self.calls,
            "p50_ms": round(self.p50_ms, 2),
            "p99_ms": round(self.p99_ms, 2),
            "qps": round(self.qps, 1),
        }


async def run_load(call: Callable[[int], Awaitable[None]], calls: int, concurrency: int) -> LoadResult:
    """`calls` calls (call(i) for i in 0..calls-1), `concurrency` at a time; per-call latency."""
    latencies: list[float] = []
    next_index = 0

    async def worker() -> None:
        nonlocal next_index
        while next_index < calls:
            index = next_index
            next_index += 1
            start = time.perf_counter()
            await call(index)
            latencies.append((time.perf_counter() - start) * 1000)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return LoadResult.of(concurrency, latencies, time.perf_counter() - start)
