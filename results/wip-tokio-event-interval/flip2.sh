#!/usr/bin/env bash
# usage: flip2.sh SERVER LABEL CONNECT [ENV=1] -> the /bad comparison at 100 ms, 10 runs, via --url
server=$1 label=$2 connect=$3; shift 3
for i in $(seq 1 10); do
  env "$@" /work/wt19-target/release/$server --threads 1 --sleep-ms 100 --port 0 > /tmp/srv.out 2>/tmp/srv.err &
  pid=$!
  for _ in $(seq 50); do grep -q "http://" /tmp/srv.out && break; sleep 0.1; done
  url=$(grep -o "http://[0-9.:]*" /tmp/srv.out | head -1)
  /work/wt19-target/release/bench-client --url "$label=$url" --sleep-ms 100 --routes /bad --connect $connect --out /tmp/f2-$label-$connect-$i > /dev/null 2>&1
  kill $pid; wait $pid 2>/dev/null
done
python3 - "$label" "$connect" <<'PY'
import json,sys
l,c=sys.argv[1],sys.argv[2]
w=[]
for i in range(1,11):
    r=json.load(open(f'/tmp/f2-{l}-{c}-{i}/results.json')); k=r['cases'][0]
    w.append(round(k['ping']['max_ms']/k['sleep_ms'],1) if k['ping']['max_ms'] else None)
print(l, c, 'closed-loop slowest wait in sleeps per run:', w)
PY
