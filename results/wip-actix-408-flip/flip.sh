#!/usr/bin/env bash
# usage: flip.sh LABEL [ENV=1]  -> runs the /bad comparison (connect before) 3 times against demo-actix via --url
label=$1; shift
for i in $(seq 4 11); do
  env "$@" /work/wt19-target/release/demo-actix --threads 1 --sleep-ms 500 --port 0 > /tmp/actix.out 2>/tmp/actix.err &
  pid=$!
  for _ in $(seq 50); do grep -q "http://" /tmp/actix.out && break; sleep 0.1; done
  url=$(grep -o "http://[0-9.:]*" /tmp/actix.out | head -1)
  /work/wt19-target/release/bench-client --url "$label=$url" --routes /bad --connect before --out /tmp/flip-$label-$i > /dev/null 2>&1
  kill $pid; wait $pid 2>/dev/null
  python3 - "$label" "$i" <<'PY'
import json,sys
r=json.load(open(f'/tmp/flip-{sys.argv[1]}-{sys.argv[2]}/results.json'))
c=r['cases'][0]; o=c['open_loop']; cl=c['ping']
print(sys.argv[1], sys.argv[2], 'wall', round(c['wall_ms']), 'open errors', o['errors'], 'of', o['scheduled'], o.get('error_reasons',[])[:1], '| closed errors', cl['errors'], 'max', cl['max_ms'])
PY
done
