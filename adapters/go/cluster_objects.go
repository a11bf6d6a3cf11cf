package main

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/client-go/informers"
	toolscache "k8s.io/client-go/tools/cache"
)

// clusterObjectKind is how new_scheduler stores one kind of the request's
// `objects`: the Go type it decodes into and the informer store upstream's
// listers read it from.
type clusterObjectKind struct {
	decode func(json.RawMessage) (any, error)
	store  func(informers.SharedInformerFactory) toolscache.Store
}

// decodeAs decodes a manifest into a fresh T.
func decodeAs[T any](raw json.RawMessage) (any, error) {
	object := new(T)
	err := json.Unmarshal(raw, object)
	return object, err
}

// clusterObjectKinds is kcache.spec.cluster_objects.OBJECT_KINDS on this
// side: one row per kind.
var clusterObjectKinds = map[string]clusterObjectKind{
	"Service": {decodeAs[v1.Service], func(f informers.SharedInformerFactory) toolscache.Store {
		return f.Core().V1().Services().Informer().GetStore()
	}},
	"ReplicationController": {decodeAs[v1.ReplicationController], func(f informers.SharedInformerFactory) toolscache.Store {
		return f.Core().V1().ReplicationControllers().Informer().GetStore()
	}},
	"ReplicaSet": {decodeAs[appsv1.ReplicaSet], func(f informers.SharedInformerFactory) toolscache.Store {
		return f.Apps().V1().ReplicaSets().Informer().GetStore()
	}},
	"StatefulSet": {decodeAs[appsv1.StatefulSet], func(f informers.SharedInformerFactory) toolscache.Store {
		return f.Apps().V1().StatefulSets().Informer().GetStore()
	}},
	"Namespace": {decodeAs[v1.Namespace], func(f informers.SharedInformerFactory) toolscache.Store {
		return f.Core().V1().Namespaces().Informer().GetStore()
	}},
	"PodDisruptionBudget": {decodeAs[policyv1.PodDisruptionBudget], func(f informers.SharedInformerFactory) toolscache.Store {
		return f.Policy().V1().PodDisruptionBudgets().Informer().GetStore()
	}},
}

// addClusterObjects puts the request's `objects` into the informer stores
// their kinds name, before the scheduler's plugins take their listers.
func addClusterObjects(r request, factory informers.SharedInformerFactory) error {
	var objects []json.RawMessage
	if _, ok := r.present("objects"); ok {
		if err := r.decode("objects", &objects); err != nil {
			return err
		}
	}
	for i, raw := range objects {
		var header struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &header); err != nil {
			return protocolErrorf("%s: objects[%d]: %v", r.op, i, err)
		}
		kind, ok := clusterObjectKinds[header.Kind]
		if !ok {
			return protocolErrorf("%s: objects[%d]: no store for kind %q", r.op, i, header.Kind)
		}
		object, err := kind.decode(raw)
		if err != nil {
			return protocolErrorf("%s: objects[%d]: %v", r.op, i, err)
		}
		if err := kind.store(factory).Add(object); err != nil {
			return protocolErrorf("%s: objects[%d]: %v", r.op, i, err)
		}
	}
	return nil
}
