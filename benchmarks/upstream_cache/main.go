// Command upstreamcachebench times upstream's scheduler cache (k8s.io/kubernetes v1.37.2,
// pkg/scheduler/backend/cache) on the synthetic clusters of benchmarks/cluster.py, so
// that `python -m benchmarks upstream` can set impl beside it, measurement by
// measurement, in turns.
//
// It builds the cluster named by its flags, fills a cache and a snapshot, prints one
// JSON line with its memory per node and per pod, then answers lines "<measurement>
// <count>" on stdin with one JSON line each: CPU nanoseconds of the process per
// operation (CLOCK_PROCESS_CPUTIME_ID, the clock Python's time.process_time reads).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// The same shapes as benchmarks/cluster.py.
var (
	zones         = []string{"zone-a", "zone-b", "zone-c"}
	requestShapes = [][2]int{{100, 128}, {250, 256}, {500, 512}, {1000, 1024}, {2000, 4096}}
)

const (
	imagePool = 100
	mib       = 1 << 20
)

func node(index int, tag string) *v1.Node {
	images := make([]v1.ContainerImage, 0, 5)
	for offset := 0; offset < 5; offset++ {
		name := fmt.Sprintf("registry.example/image-%d:v1", (index+offset*7)%imagePool)
		images = append(images, v1.ContainerImage{Names: []string{name}, SizeBytes: mib})
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   fmt.Sprintf("%s-%d", tag, index),
			Labels: map[string]string{v1.LabelTopologyZone: zones[index%len(zones)]},
		},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("64"),
				v1.ResourceMemory: resource.MustParse("256Gi"),
				v1.ResourcePods:   resource.MustParse("110"),
			},
			Images: images,
		},
	}
}

func pod(serial int, nodeName, tag string) *v1.Pod {
	shape := requestShapes[serial%len(requestShapes)]
	container := v1.Container{
		Name: "c",
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(fmt.Sprintf("%dm", shape[0])),
			v1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", shape[1])),
		}},
	}
	if serial%20 == 0 {
		port := int32(8000 + serial%100)
		container.Ports = []v1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
	spec := v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{container}}
	if serial%10 == 3 {
		spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{
				ClaimName: fmt.Sprintf("claim-%d", serial),
			},
		}}}
	}
	if serial%30 == 0 {
		spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
				TopologyKey:   v1.LabelHostname,
			}},
		}}
	} else if serial%10 == 5 {
		spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{}}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			UID:       types.UID(fmt.Sprintf("%s-uid-%d", tag, serial)),
			Name:      fmt.Sprintf("%s-%d", tag, serial),
			Namespace: "default",
		},
		Spec: spec,
	}
}

// extraPods mirrors cluster.extra_pods: count pods spread round-robin over the nodes.
func extraPods(count int, nodes []*v1.Node, tag string) []*v1.Pod {
	pods := make([]*v1.Pod, count)
	for serial := range pods {
		pods[serial] = pod(serial, nodes[serial%len(nodes)].Name, tag)
	}
	return pods
}

func cpuNanos() int64 {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &now); err != nil {
		panic(err)
	}
	return now.Nano()
}

func heapBytes() uint64 {
	var stats runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

type bench struct {
	logger   logr.Logger
	cache    cache.Cache
	snapshot *cache.Snapshot
	nodes    []*v1.Node
	// one pod per node, assumed and forgotten to change exactly that node
	touch []*v1.Pod
	// the operation section's pods outside the cluster
	extra []*v1.Pod
	// what one CPU-clock reading pair costs, subtracted from per-call timings
	clockPair float64
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// measure runs one measurement after a full collection, as the Python side starts each
// after gc.collect(): what the collector does meanwhile is the measured code's own cost.
// FreeOSMemory also returns the freed heap to the system at once, which the runtime's
// scavenger would otherwise do in the background, billed to whatever runs next.
func (b *bench) measure(name string, count int) float64 {
	debug.FreeOSMemory()
	// The pairs and rebuilds before changed nodes this snapshot has not seen: catch up
	// first, so that a refresh measurement starts from an up-to-date snapshot.
	must(b.cache.UpdateSnapshot(b.logger, b.snapshot))
	switch name {
	case "refresh0":
		start := cpuNanos()
		for i := 0; i < count; i++ {
			must(b.cache.UpdateSnapshot(b.logger, b.snapshot))
		}
		return float64(cpuNanos()-start) / float64(count)
	case "refresh1":
		var total int64
		for i := 0; i < count; i++ {
			p := b.touch[i%len(b.touch)]
			must(b.cache.AssumePod(b.logger, p))
			must(b.cache.ForgetPod(b.logger, p))
			start := cpuNanos()
			must(b.cache.UpdateSnapshot(b.logger, b.snapshot))
			total += cpuNanos() - start
		}
		return float64(total)/float64(count) - b.clockPair
	case "clone":
		lister := b.snapshot.NodeInfos()
		start := cpuNanos()
		for i := 0; i < count; i++ {
			info, err := lister.Get(b.nodes[i%len(b.nodes)].Name)
			must(err)
			info.Snapshot()
		}
		return float64(cpuNanos()-start) / float64(count)
	case "assume_forget", "add_remove":
		start := cpuNanos()
		for i := 0; i < count; i++ {
			p := b.extra[i%len(b.extra)]
			if name == "assume_forget" {
				must(b.cache.AssumePod(b.logger, p))
				must(b.cache.ForgetPod(b.logger, p))
			} else {
				must(b.cache.AddPod(b.logger, p))
				must(b.cache.RemovePod(b.logger, p))
			}
		}
		return float64(cpuNanos()-start) / float64(2*count)
	case "rebuild":
		start := cpuNanos()
		for i := 0; i < count; i++ {
			must(b.cache.UpdateSnapshot(b.logger, cache.NewEmptySnapshot()))
		}
		return float64(cpuNanos()-start) / float64(count)
	}
	panic(fmt.Sprintf("unknown measurement %q", name))
}

func calibrateClockPair() float64 {
	const pairs = 100_000
	var total int64
	for i := 0; i < pairs; i++ {
		start := cpuNanos()
		total += cpuNanos() - start
	}
	return float64(total) / pairs
}

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: upstreamcachebench NODES PODS_PER_NODE EXTRA_PODS")
		os.Exit(2)
	}
	sizes := make([]int, 3)
	for i, arg := range os.Args[1:] {
		value, err := strconv.Atoi(arg)
		if err != nil || value < 1 {
			fmt.Fprintf(os.Stderr, "upstreamcachebench: argument %d: want a positive integer, got %q\n", i+1, arg)
			os.Exit(2)
		}
		sizes[i] = value
	}
	nodeCount, podsPerNode, extraCount := sizes[0], sizes[1], sizes[2]
	// The cache's background loop records gauges, which kube-scheduler initialises first.
	metrics.InitMetrics()

	nodes := make([]*v1.Node, nodeCount)
	for i := range nodes {
		nodes[i] = node(i, "node")
	}
	pods := make([]*v1.Pod, 0, nodeCount*podsPerNode)
	for i, n := range nodes {
		for slot := 0; slot < podsPerNode; slot++ {
			pods = append(pods, pod(i*podsPerNode+slot, n.Name, "pod"))
		}
	}
	b := &bench{
		logger: logr.Discard(),
		cache:  cache.New(context.Background(), nil, false, false),
		nodes:  nodes,
		touch:  extraPods(nodeCount, nodes, "touch"),
		extra:  extraPods(extraCount, nodes, "op"),
	}
	start := heapBytes()
	for _, n := range nodes {
		b.cache.AddNode(b.logger, n)
	}
	withNodes := heapBytes()
	for _, p := range pods {
		must(b.cache.AddPod(b.logger, p))
	}
	withPods := heapBytes()
	b.snapshot = cache.NewEmptySnapshot()
	must(b.cache.UpdateSnapshot(b.logger, b.snapshot))
	withSnapshot := heapBytes()
	runtime.KeepAlive(pods)
	b.clockPair = calibrateClockPair()

	out := json.NewEncoder(os.Stdout)
	must(out.Encode(map[string]any{
		"bytes_per_node":          float64(withNodes-start) / float64(nodeCount),
		"bytes_per_pod":           float64(withPods-withNodes) / float64(len(pods)),
		"bytes_per_snapshot_node": float64(withSnapshot-withPods) / float64(nodeCount),
		"clock_pair_ns":           b.clockPair,
	}))
	// UPSTREAMCACHEBENCH_CPUPROFILE=file: a pprof CPU profile of the measurements (go tool pprof).
	if path := os.Getenv("UPSTREAMCACHEBENCH_CPUPROFILE"); path != "" {
		profile, err := os.Create(path)
		must(err)
		must(pprof.StartCPUProfile(profile))
		defer pprof.StopCPUProfile()
	}
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) != 2 {
			fmt.Fprintf(os.Stderr, "upstreamcachebench: want \"<measurement> <count>\", got %q\n", lines.Text())
			os.Exit(2)
		}
		count, err := strconv.Atoi(fields[1])
		if err != nil || count < 1 {
			fmt.Fprintf(os.Stderr, "upstreamcachebench: bad count %q\n", fields[1])
			os.Exit(2)
		}
		must(out.Encode(map[string]any{"ns_per_op": b.measure(fields[0], count)}))
	}
}
