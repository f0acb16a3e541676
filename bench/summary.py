#!/usr/bin/env python3
"""Writes the generated summary of bench/RESULTS.md from bench/results/*.json.

  bench/summary.py           # rewrite the part between the summary markers
  bench/summary.py --check   # exit 1 if it differs (the ctest bench_summary_is_current)

Each results file is bench/results/<date>-<machine>-<commit>.json (schema
hone-bench/1: date, machine, commit, device, runs[]; each run names its
harness, method and source, and holds rows). Nothing here measures anything:
it only tabulates what the files hold.
"""
import glob, json, math, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
BEGIN, END = '<!-- summary:begin (bench/summary.py writes this part) -->', '<!-- summary:end -->'


def load():
    files = []
    for p in sorted(glob.glob(os.path.join(HERE, 'results', '*.json'))):
        with open(p) as f:
            d = json.load(f)
        d['_file'] = os.path.relpath(p, HERE)
        files.append(d)
    return files


def fmt(x):
    return '-' if x is None else (f'{x:.3f}' if x < 10 else f'{x:.1f}')


def describe(d):
    parts = []
    for r in d['runs']:
        what = r.get('title') or r['kind']
        if r['kind'] == 'pytorch-peer':
            what = 'against PyTorch: ' + ', '.join(sorted({x['model'] for x in r['rows']}))
        elif r['kind'] == 'zoo-cpu-vs-ort':
            what = f"zoo against ONNX Runtime at {r['threads']} thread(s)"
        elif r['kind'] == 'zoo-pytorch-peer':
            what = f"zoo against PyTorch (hone {r['hone_backend']})"
        elif r['kind'] == 'tune-report':
            what = 'hone tune: ' + ', '.join(sorted({x['model'] for x in r['rows']}))
        if what not in parts:
            parts.append(what)
    return '; '.join(parts).replace('|', '\\|')


def gpu_table(files):
    # One table per GPU machine (an H100 row is not an H200 row).
    out = []
    for machine in sorted({d['machine'] for d in files
                           if any(r['kind'] == 'pytorch-peer' for r in d['runs'])}, reverse=True):
        out += gpu_table_of(machine, [d for d in files if d['machine'] == machine])
    return out


def gpu_table_of(machine, files):
    peers = [d for d in files if any(r['kind'] == 'pytorch-peer' for r in d['runs'])]
    if not peers:
        return []
    latest = max(peers, key=lambda d: d['date'])['date']
    # The newest row per model and batch, over every file of the machine.
    # Runs with `"io": "device"` timed hone on device-resident inputs (`hone bench --io device`), as
    # PyTorch is timed: their rows fill the last columns, each ratio against its own run's PyTorch.
    rows, device_rows = {}, {}
    for d in sorted(peers, key=lambda d: d['date']):
        for r in d['runs']:
            if r['kind'] != 'pytorch-peer':
                continue
            for x in r['rows']:
                (device_rows if r.get('io') == 'device' else rows)[(x['model'], x['batch'])] = (x['ms'], d)
    out = [f'### cuda on an {machine.upper()} against PyTorch (newest: {latest})', '',
           'Milliseconds. PyTorch fp32 best = the fastest of eager, CUDA graph and torch.compile in strict fp32; '
           'bf16 best = the fastest of autocast (eager, CUDA graph) and of the weights cast to bf16 (eager, CUDA '
           'graph, torch.compile), of those the run measured (which one in brackets; PyTorch timed by CUDA events on '
           'device-resident inputs, median of 50). hone = `hone bench --backend cuda` p50 end to end (input and '
           'output copies included) at that precision; on device-resident inputs = `hone bench --io device` p50 '
           '(the input copied to the device once, the output left there, as PyTorch is timed), its ratio against '
           'the PyTorch bf16 best of its own run. Ratio below 1: hone is faster. Each row is the newest of its '
           'model and batch.', '',
           '| model | batch | PyTorch fp32 best | hone fp32 | ratio | PyTorch bf16 best | hone bf16 | ratio '
           '| hone bf16 on device-resident inputs | ratio | results |',
           '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |']

    def bf16_best(ms):
        t16 = [(ms[k], k.replace('_bf16', '').replace('_', ' ')) for k in
               ('eager_bf16', 'cudagraph_bf16', 'eager_bf16_weights', 'cudagraph_bf16_weights',
                'compile_bf16_weights') if ms.get(k)]
        return min(t16) if t16 else None

    for (model, batch), (ms, d) in sorted(rows.items()):
        t32 = [(ms[k], k.split('_')[0]) for k in ('eager_fp32', 'cudagraph_fp32', 'compile_fp32') if ms.get(k)]
        b32, b16 = (min(t32) if t32 else None), bf16_best(ms)
        h32, h16 = ms.get('hone_fp32'), ms.get('hone_bf16')
        r32 = f'{h32 / b32[0]:.2f}' if h32 and b32 else '-'
        r16 = f'{h16 / b16[0]:.2f}' if h16 and b16 else '-'
        c32 = f'{fmt(b32[0])} ({b32[1]})' if b32 else '-'
        c16 = f'{fmt(b16[0])} ({b16[1]})' if b16 else '-'
        hd, rd = '-', '-'
        if (model, batch) in device_rows and device_rows[(model, batch)][1] is d:
            dms = device_rows[(model, batch)][0]
            bd = bf16_best(dms)
            if dms.get('hone_bf16'):
                hd = fmt(dms['hone_bf16'])
                rd = f'{dms["hone_bf16"] / bd[0]:.2f}' if bd else '-'
        out.append(f'| {model} | {batch} | {c32} | {fmt(h32)} | {r32} | {c16} | {fmt(h16)} | {r16} | {hd} | {rd} | '
                   f'[{d["commit"]}]({d["_file"]}) |')
    return out + ['']


def corpus_table(files):
    runs = [(d, r) for d in files for r in d['runs']
            if r.get('harness') == 'bench/corpus.sh' and 'hone p50 (ms)' in r.get('columns', [])]
    if not runs:
        return []
    latest = max(d['date'] + d['commit'] for d, _ in runs)
    by_threads = {}
    for d, r in runs:
        if d['date'] + d['commit'] != latest:
            continue
        for x in r['rows']:
            h, o = x.get('hone p50 (ms)'), x.get('ORT p50 (ms)')
            if isinstance(h, float) and isinstance(o, float) and o > 0:
                by_threads.setdefault(int(x['threads']), []).append((h / o, x['model'], d))
    out = ['### Tuned hone against ONNX Runtime on the real-model corpus (CPU)', '',
           '`bench/corpus.sh`: `hone tune` on each model, then alternating rounds of `hone bench` and ONNX Runtime '
           'at the same threads and inputs. Geometric mean of hone p50 / ORT p50 over the models, computed from the '
           'stored p50s; below 1: hone is faster.', '',
           '| threads | models | geometric mean | worst model (ratio) | results |', '| --- | --- | --- | --- | --- |']
    for t, xs in sorted(by_threads.items()):
        g = math.exp(sum(math.log(r) for r, _, _ in xs) / len(xs))
        worst = max(xs)
        d = xs[0][2]
        out.append(f'| {t} | {len(xs)} | {g:.2f} | {worst[1]} ({worst[0]:.2f}) | [{d["commit"]}, {d["date"]}]({d["_file"]}) |')
    return out + ['']


def zoo_table(files):
    """The newest figure of every (model, point), newest runs first (by date,
    then the run's time where it records one): a run of a few models updates
    their rows and keeps the others' last figures, each row naming its file."""
    runs = [(d, r) for d in files for r in d['runs'] if r['kind'] == 'zoo-cpu-vs-ort']
    if not runs:
        return []
    runs.sort(key=lambda dr: (dr[0]['date'], dr[0].get('time', ''), dr[0]['commit']), reverse=True)
    d, r = runs[0]
    rows = {}
    for dd, rr in runs:
        if rr['threads'] != r['threads']:
            continue
        for x in rr['rows']:
            rows.setdefault((x['model'], x['point']), (x, dd))
    ratios = [x['ratio'] for x, _ in rows.values() if 'ratio' in x]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float('nan')
    out = [f'### The zoo against ONNX Runtime on the CPU (newest: {d["date"]}, {d["commit"]}, {r["threads"]} thread(s))', '',
           f'`bench/zoo_speed.py`: {r["method"]}; same inputs and threads on both sides. Ratio below 1: hone is '
           f'faster. Each row is the newest run of that model and point. Geometric mean over {len(ratios)} points: '
           f'**{geo:.2f}**.', '',
           '| model | point | hone p50 (backend) | ORT p50 | ratio | results |', '| --- | --- | --- | --- | --- | --- |']
    for (model, point), (x, dd) in sorted(rows.items()):
        best = x.get('hone_best')
        hone = f'{fmt(best["p50_ms"])} ({best["backend"]})' if best else '-'
        ratio = f'{x["ratio"]:.2f}' if 'ratio' in x else '-'
        out.append(f'| {model} | {point} | {hone} | {fmt(x["p50_ms"].get("ort"))} | {ratio} | '
                   f'[{dd["commit"]}]({dd["_file"]}) |')
    return out + ['']


def zoo_peer_table(files):
    """bench/cuda_h200/zoo_peer.py: per machine and hone backend, the newest row of every (model, point,
    precision), newest runs first (a run of a few models updates their rows and keeps the others')."""
    runs = [(d, r) for d in files for r in d['runs'] if r['kind'] == 'zoo-pytorch-peer']
    runs.sort(key=lambda dr: (dr[0]['date'], dr[0].get('time', ''), dr[0]['commit']), reverse=True)
    out = []
    for machine, backend in sorted({(d['machine'], r['hone_backend']) for d, r in runs}, reverse=True):
        mine = [(d, r) for d, r in runs if d['machine'] == machine and r['hone_backend'] == backend]
        rows = {}
        for d, r in mine:
            for x in r['rows']:
                rows.setdefault((x['model'], x['point'], x['precision']), (x, d))
        d0, r0 = mine[0]
        geo = []
        for prec in ('fp32', 'tf32', 'bf16', 'fp16'):
            xs = [x['ratio'] for x, _ in rows.values() if x['precision'] == prec and 'ratio' in x]
            if xs:
                geo.append(f'{prec} **{math.exp(sum(map(math.log, xs)) / len(xs)):.2f}** over {len(xs)} points')
        out += [f'### The zoo: hone {backend} against PyTorch on {machine} (newest: {d0["date"]}, {d0["commit"]})', '',
                f'`{r0["harness"]}`: {r0["method"]} Ratio below 1: hone is faster. Each row is the newest run of that '
                f'model, point and precision. Geometric mean of the ratios: {"; ".join(geo) or "none measured"}.', '',
                '| model | point | precision | PyTorch best | hone p50 | ratio | hone device p50 | hone rel L2 | '
                'results |', '| --- | --- | --- | --- | --- | --- | --- | --- | --- |']
        for (model, point, prec), (x, d) in sorted(rows.items()):
            h = x.get('hone', {})
            tv = x.get('torch', {}).values()
            failed = x.get('error', '').startswith('PyTorch') or any('error' in v for v in tv)
            best = f'{fmt(x["best"]["ms"])} ({x["best"]["variant"]})' if 'best' in x else ('failed' if failed else '-')
            why = x.get('skipped') or x.get('error') or h.get('bench_error') or ''
            hp = fmt(h['p50_ms']) if 'p50_ms' in h else ('failed' if h.get('bench_error') else '-')
            rl = f'{h["rel_l2"]:.2e}' if 'rel_l2' in h else ('failed' if h.get('run_error') else '-')
            ratio = f'{x["ratio"]:.2f}' if 'ratio' in x else '-'
            note = (' ' + why.splitlines()[0][:80].replace('|', '\\|')) if why and 'p50_ms' not in h else ''
            dev = fmt(h.get('device_p50_ms'))
            out.append(f'| {model} | {point} | {prec} | {best} | {hp}{note} | {ratio} | {dev} | {rl} | '
                       f'[{d["commit"]}]({d["_file"]}) |')
        out.append('')
    return out


def summary():
    files = load()
    out = [BEGIN, '']
    out += gpu_table(files)
    out += corpus_table(files)
    out += zoo_table(files)
    out += zoo_peer_table(files)
    out += ['### Every results file', '', '| date | machine | commit | what | file |', '| --- | --- | --- | --- | --- |']
    for d in sorted(files, key=lambda d: (d['date'], d['machine'], d['commit']), reverse=True):
        out.append(f'| {d["date"]} | {d["machine"]} | {d["commit"]} | {describe(d)} | [json]({d["_file"]}) |')
    out += ['', END]
    return '\n'.join(out)


def main():
    path = os.path.join(HERE, 'RESULTS.md')
    with open(path) as f:
        text = f.read()
    a, b = text.find(BEGIN), text.find(END)
    if a < 0 or b < 0:
        sys.exit(f'{path}: no summary markers')
    new = text[:a] + summary() + text[b + len(END):]
    if '--check' in sys.argv:
        if new != text:
            print(f'{path}: the summary differs from bench/results/; run bench/summary.py', file=sys.stderr)
            sys.exit(1)
        print('summary current')
        return
    with open(path, 'w') as f:
        f.write(new)


if __name__ == '__main__':
    main()
