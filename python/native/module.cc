// pstrain._native: a trained model (predict/loaded_model.h) for Python.
// pstrain/model.py is the face users see; this module only moves buffers:
// a C-contiguous float32 input is read in place (pybind11's noconvert: any
// other array is refused here, model.py converts), the probabilities are
// written straight into the numpy array returned. The GIL is released while
// a model file or a data file is read and while the model predicts; one
// call at a time runs on a model (LoadedModel keeps buffers between calls).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "job/job.h"
#include "predict/loaded_model.h"
#include "python/native/status_errors.h"

namespace py = pybind11;

namespace pst_python {
namespace {

class NativeModel {
 public:
  explicit NativeModel(std::unique_ptr<pst::LoadedModel> model) : model_(std::move(model)) {}

  const pst::TrainedModel& trained() const { return model_->trained(); }

  // x: N x D or N x H x W x C; returns N x classes.
  py::array_t<float> PredictDense(const py::array_t<float, py::array::c_style>& x) {
    if (x.ndim() != 2 && x.ndim() != 4) {
      throw py::value_error("examples must be N x D or N x H x W x C, not " +
                            std::to_string(x.ndim()) + "-dimensional");
    }
    const pst::InputShape shape = x.ndim() == 2
                                      ? pst::InputShape(x.shape(1))
                                      : pst::InputShape({x.shape(1), x.shape(2), x.shape(3)});
    const int64_t n = x.shape(0);
    py::array_t<float> out({n, static_cast<int64_t>(trained().num_classes)});
    const float* in = x.data();
    float* probabilities = out.mutable_data();
    pst::Status status;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(mu_);
      status = model_->PredictDense(in, n, shape, probabilities);
    }
    RaiseIfError(status);
    return out;
  }

  // A click log's examples, read by the project's reader for `format`.
  py::array_t<float> PredictFile(const std::string& path, const std::string& format) {
    pst::StatusOr<pst::Dataset> data = pst::InvalidArgument("unread");
    {
      py::gil_scoped_release unlocked;
      data = model_->ReadTestFile(path, format);
    }
    RaiseIfError(data.status());
    py::array_t<float> out({data->size, static_cast<int64_t>(trained().num_classes)});
    float* probabilities = out.mutable_data();
    pst::Status status;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> lock(mu_);
      status = model_->PredictDataset(*data, probabilities);
    }
    RaiseIfError(status);
    return out;
  }

 private:
  std::mutex mu_;  // one prediction at a time
  std::unique_ptr<pst::LoadedModel> model_;
};

std::unique_ptr<NativeModel> Load(const std::string& path, const std::string& device) {
  pst::StatusOr<std::unique_ptr<pst::LoadedModel>> loaded = pst::InvalidArgument("unread");
  {
    py::gil_scoped_release unlocked;
    loaded = pst::LoadedModel::Open(path, device);
  }
  RaiseIfError(loaded.status());
  return std::make_unique<NativeModel>(std::move(loaded).value());
}

}  // namespace
}  // namespace pst_python

PYBIND11_MODULE(_native, m) {
  using pst_python::NativeModel;
  m.doc() = "pstrain's C++ prediction (predict/loaded_model.h); use pstrain.load";
  m.attr("__version__") = PST_VERSION;
  py::class_<NativeModel>(m, "NativeModel")
      .def("predict_dense", &NativeModel::PredictDense, py::arg("x").noconvert())
      .def("predict_file", &NativeModel::PredictFile, py::arg("path"), py::arg("format"))
      .def_property_readonly(
          "description", [](const NativeModel& n) { return pst::ModelDescription(n.trained()); })
      .def_property_readonly(
          "model", [](const NativeModel& n) { return pst::ModelLabel(n.trained().model); })
      .def_property_readonly("num_classes",
                             [](const NativeModel& n) { return n.trained().num_classes; })
      .def_property_readonly("input_dims",
                             [](const NativeModel& n) { return n.trained().input.dims(); })
      .def_property_readonly("is_click_model",
                             [](const NativeModel& n) { return n.trained().click_model; })
      .def_property_readonly("num_fields",
                             [](const NativeModel& n) { return n.trained().num_fields; })
      .def_property_readonly(
          "with_features", [](const NativeModel& n) { return !n.trained().features_text.empty(); })
      .def_property_readonly("standardized", [](const NativeModel& n) {
        return n.trained().standardization.has_value();
      });
  m.def("load", &pst_python::Load, py::arg("path"), py::arg("device") = "cpu");
}
